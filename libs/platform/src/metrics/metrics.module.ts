import { Global, Module } from '@nestjs/common';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../config/runtime-config';
import { Database } from '../database/sql';
import { MetricsServer } from './metrics-server';
import { OpenbotMetrics } from './openbot-metrics';
import { registerScrapeGauges } from './scrape-gauges';

/** The node's metrics and their port (docs/decisions/034-metrics.md); global: every layer records into it. */
@Global()
@Module({
  providers: [
    {
      provide: OpenbotMetrics,
      inject: [RUNTIME_CONFIG, Database],
      useFactory: (config: RuntimeConfig, db: Database) => {
        const metrics = new OpenbotMetrics(config);
        // The pool the node's SQL runs on: its counters are read at scrape time.
        if (metrics.enabled) registerScrapeGauges(metrics.registry, db);
        return metrics;
      },
    },
    MetricsServer,
  ],
  exports: [OpenbotMetrics, MetricsServer],
})
export class MetricsModule {}

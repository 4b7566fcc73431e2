import {
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { Engine, faultPointsFromEnv, type Clock } from '@openbot/engine';
import { EngineNode } from '@openbot/engine/node';
import { DataSource } from 'typeorm';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../config/runtime-config';
import { SqlFailureRecorder } from '../errors/sql-failure-recorder';
import { StartupGate } from '../health/startup-gate';
import { poolOf } from '../database/pool';
import { OpenbotMetrics } from '../metrics/openbot-metrics';
import { OpenbotTracing } from '../tracing/openbot-tracing';
import { SqlIdentityCheck } from '../identity/sql-identity-check';
import { Sealer } from '../sealing/sealer';

/** Starts the engine once the startup gate opens (pg-boss's schema exists then) and stops it first at shutdown. */
@Injectable()
class EngineLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Engine');
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    @Inject(EngineNode) private readonly engine: EngineNode,
    @Inject(StartupGate) private readonly gate: StartupGate,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.startWhenReady();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.engine.stop(this.config.shutdownTimeoutMs);
  }

  private async startWhenReady(): Promise<void> {
    if (this.stopped) return;
    if (await this.gate.check()) {
      await this.engine.start();
      this.logger.log(`engine started on node ${this.engine.nodeId}`);
      return;
    }
    this.timer = setTimeout(() => void this.startWhenReady().catch(() => undefined), 2_000);
    this.timer.unref();
  }
}

/**
 * The clock the engine gives workflows. Not provided here: a global test module may provide one
 * (a ManualClock that drives time limits without waiting); otherwise the system clock.
 */
export const ENGINE_CLOCK = Symbol('ENGINE_CLOCK');

@Global()
@Module({
  providers: [
    SqlFailureRecorder,
    { provide: SqlIdentityCheck, inject: [DataSource], useFactory: (dataSource: DataSource) => new SqlIdentityCheck(poolOf(dataSource)) },
    {
      provide: EngineNode,
      inject: [DataSource, RUNTIME_CONFIG, Sealer, SqlFailureRecorder, SqlIdentityCheck, OpenbotMetrics, OpenbotTracing, { token: ENGINE_CLOCK, optional: true }],
      useFactory: (
        dataSource: DataSource,
        config: RuntimeConfig,
        sealer: Sealer,
        failures: SqlFailureRecorder,
        identityCheck: SqlIdentityCheck,
        metrics: OpenbotMetrics,
        tracing: OpenbotTracing,
        clock?: Clock,
      ) =>
        new EngineNode({
          pool: poolOf(dataSource),
          connectionString: config.databaseUrl,
          sealer,
          failures,
          identityCheck,
          nodeId: config.nodeId,
          leaseSeconds: config.leaseSeconds,
          faults: faultPointsFromEnv(process.env, config.production),
          // Metrics off: the engine keeps its no-op port (decision 034).
          ...(metrics.enabled ? { metrics } : {}),
          // Traces off: the engine keeps its no-op port (decision 040).
          ...(tracing.enabled ? { tracing } : {}),
          ...(clock ? { clock } : {}),
        }),
    },
    // Features get the node's engine as the authoring entry's Engine handle; only this module sees EngineNode.
    { provide: Engine, useExisting: EngineNode },
    EngineLifecycle,
  ],
  exports: [Engine, SqlFailureRecorder],
})
export class EngineModule {}

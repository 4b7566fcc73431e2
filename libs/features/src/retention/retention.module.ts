import { Inject, Injectable, Logger, Module, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Engine } from '@openbot/engine';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../platform/src/config/runtime-config';
import { Database } from '../../../platform/src/database/sql';
import { StartupGate } from '../../../platform/src/health/startup-gate';
import { SetRetentionHandler } from './commands/set-retention.command';
import { GetRetentionHandler } from './queries/get-retention.query';
import { RETENTION_SCHEDULE, RETENTION_WORKFLOW, retentionWorkflow } from './retention.workflow';

/** The platform service the retention runs as (IDN-10): platform work, no organization, no member. */
export const RETENTION_SERVICE_ID = '0190c3f0-0000-7000-8000-000000000041';

/**
 * Registers the retention workflow and keeps its schedule (decision 041): upserted once the
 * schema is there (the startup gate), so every node agrees on the platform's schedule and a
 * changed `OPENBOT_RETENTION_SCHEDULE` takes effect at the next boot.
 */
@Injectable()
class RetentionSchedule implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Retention');
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    @Inject(Engine) private readonly engine: Engine,
    @Inject(Database) private readonly db: Database,
    @Inject(StartupGate) private readonly gate: StartupGate,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  onModuleInit(): void {
    this.engine.register(retentionWorkflow({ db: this.db, defaults: this.config.retention }));
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.upsertWhenReady();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private async upsertWhenReady(): Promise<void> {
    if (this.stopped) return;
    try {
      if (await this.gate.check()) {
        await this.engine.schedules.upsert({
          name: RETENTION_SCHEDULE,
          cron: this.config.retention.schedule,
          workflow: RETENTION_WORKFLOW,
          input: null,
          scope: { kind: 'service', id: RETENTION_SERVICE_ID, organizationId: null },
          // A node down for a while runs once when it is back, not once per missed fire time.
          missed: { policy: 'latest' },
        });
        return;
      }
    } catch (error) {
      this.logger.error(`retention schedule not set: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    this.timer = setTimeout(() => void this.upsertWhenReady(), 2_000);
    this.timer.unref();
  }
}

/** Retention of event logs and call payloads (docs/decisions/041-retention.md). */
@Module({ providers: [GetRetentionHandler, SetRetentionHandler, RetentionSchedule] })
export class RetentionModule {}

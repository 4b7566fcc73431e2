import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { pendingMigrations } from '../database/migrate';

const RECHECK_MS = 2_000;

/**
 * Keeps the node from serving until the database has every migration this build knows (MIG-02).
 * The node never runs DDL itself (MIG-01): it waits for `openbot migrate` and re-checks.
 * Once open, the gate stays open for the life of the process.
 */
@Injectable()
export class StartupGate implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('StartupGate');
  private open = false;
  private timer: NodeJS.Timeout | null = null;
  private pending: readonly string[] = [];

  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  get isOpen(): boolean {
    return this.open;
  }

  get pendingMigrations(): readonly string[] {
    return this.pending;
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.check();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Checks now; while closed, schedules the next check. */
  async check(): Promise<boolean> {
    if (this.open) return true;
    try {
      this.pending = await pendingMigrations(this.dataSource);
      this.open = this.pending.length === 0;
      if (!this.open) {
        this.logger.warn(`waiting for ${this.pending.length} pending migration(s); run "openbot migrate"`);
      }
    } catch {
      this.logger.warn('cannot read the migration state yet; retrying');
    }
    if (!this.open && this.timer === null && this.dataSource.isInitialized) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.check();
      }, RECHECK_MS);
      this.timer.unref();
    }
    return this.open;
  }
}

import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { RecordFailure } from '@openbot/platform';

/** Error records held in memory at most; past this the oldest cause is dropped (its ID was already answered). */
const MAX_UNSAVED = 1_000;
const RETRY_MS = 5_000;

/**
 * Error records that could not be saved because the database was down (ERR-01): their causes
 * are kept in memory, never logged, and saved as soon as the database answers again.
 */
@Injectable()
export class UnsavedFailures implements OnApplicationShutdown {
  private readonly logger = new Logger('ErrorBoundary');
  private readonly pending: RecordFailure[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(@Inject(CommandBus) private readonly commands: CommandBus) {}

  get size(): number {
    return this.pending.length;
  }

  keep(record: RecordFailure): void {
    if (this.pending.length >= MAX_UNSAVED) {
      const dropped = this.pending.shift();
      this.logger.warn({ errorId: dropped?.errorId }, 'error record dropped: too many unsaved while the database is down');
    }
    this.pending.push(record);
    this.schedule();
  }

  /** Saves what it can now; answers how many are still unsaved. */
  async flush(): Promise<number> {
    while (this.pending.length > 0) {
      const next = this.pending[0]!;
      try {
        await this.commands.execute(next);
      } catch {
        this.schedule();
        return this.pending.length;
      }
      this.pending.shift();
      this.logger.log({ errorId: next.errorId }, 'error record saved after the database came back');
    }
    return 0;
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const left = await this.flush().catch(() => this.pending.length);
    if (left > 0) this.logger.warn({ unsaved: left }, 'error records lost at shutdown: the database was unavailable');
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, RETRY_MS);
    this.timer.unref();
  }
}

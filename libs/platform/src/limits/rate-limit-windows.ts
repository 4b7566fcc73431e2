import { Inject, Injectable } from '@nestjs/common';
import { Database } from '../database/sql';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../config/runtime-config';

export interface WindowCount {
  /** Hits in the current window, this one included. */
  readonly hits: number;
  /** Whole seconds until the window ends (at least 1): the `Retry-After` of a refusal. */
  readonly retryAfterSeconds: number;
}

/**
 * Fixed-window counters in PostgreSQL, shared by every node (docs/decisions/017). A bucket's
 * window starts at its first hit (not at a clock boundary, so a burst cannot straddle two
 * windows to get twice the limit) and lasts `OPENBOT_RATE_LIMIT_WINDOW_SECONDS`.
 */
@Injectable()
export class RateLimitWindows {
  private lastPrune = 0;

  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  /** Counts one hit in `bucket` with one upsert and answers the window's count. */
  async hit(bucket: string): Promise<WindowCount> {
    const window = this.config.limits.windowSeconds;
    // Every SET expression sees the row before the update: both CASEs ask whether the old window is still open.
    const row = (await this.db.one<{ hits: number; retry_after: number }>({
      name: 'limits.hit_window',
      text: `INSERT INTO rate_limit_windows AS w (bucket, started_at, hits) VALUES ($1, now(), 1)
        ON CONFLICT (bucket) DO UPDATE SET
          hits = CASE WHEN w.started_at > now() - make_interval(secs => $2) THEN LEAST(w.hits + 1, 2147483647) ELSE 1 END,
          started_at = CASE WHEN w.started_at > now() - make_interval(secs => $2) THEN w.started_at ELSE now() END
        RETURNING hits, GREATEST(1, ceil(extract(epoch FROM w.started_at + make_interval(secs => $2) - now())))::int AS retry_after`,
      values: [bucket, window],
    }))!;
    this.pruneNowAndThen(window);
    return { hits: row.hits, retryAfterSeconds: row.retry_after };
  }

  /**
   * Ended windows and abandoned stream slots (a dead node's) are deleted at most once a window
   * per node, beside a hit: the tables stay as small as the set of recently active clients.
   */
  private pruneNowAndThen(windowSeconds: number): void {
    const now = Date.now();
    if (now - this.lastPrune < windowSeconds * 1000) return;
    this.lastPrune = now;
    void this.db
      .count(`DELETE FROM rate_limit_windows WHERE started_at < now() - make_interval(secs => $1)`, [windowSeconds])
      .then(() => this.db.count(`DELETE FROM event_stream_slots WHERE expires_at < now()`))
      .catch(() => undefined);
  }
}

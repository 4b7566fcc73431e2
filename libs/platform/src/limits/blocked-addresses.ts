import { Injectable } from '@nestjs/common';

/** At most this many blocked clients are remembered; past it the oldest entry goes. */
const MAX_BLOCKED = 10_000;

/**
 * The clients this node saw reach the failed-authentication limit, until their window ends
 * (docs/decisions/017, 073): client addresses (`address:<key>`) and API key IDs (`key:<id>`).
 * Read without a database query; the counts themselves are shared in PostgreSQL, so another node
 * learns of a block at its first failure. A blocked address only turns its failures into 429; a
 * blocked key ID is refused before its secret is looked at.
 */
@Injectable()
export class BlockedAddresses {
  private readonly until = new Map<string, number>();

  block(key: string, seconds: number): void {
    this.until.delete(key);
    if (this.until.size >= MAX_BLOCKED) this.until.delete(this.until.keys().next().value!);
    this.until.set(key, Date.now() + seconds * 1000);
  }

  /** Whole seconds the client stays blocked, or 0. */
  remainingSeconds(key: string): number {
    const until = this.until.get(key);
    if (until === undefined) return 0;
    const left = until - Date.now();
    if (left <= 0) {
      this.until.delete(key);
      return 0;
    }
    return Math.ceil(left / 1000);
  }
}

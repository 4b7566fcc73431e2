import { isConnectionFailure } from './storage-retry';

/** How a group writer stores its items. Each settles its own items (answers or fails their callers). */
export interface GroupWrite<T> {
  /** Writes one item on its own and settles it; never throws. */
  one(item: T): Promise<void>;
  /** Writes several items in one statement and settles each; throws when the statement failed. */
  many(batch: T[]): Promise<void>;
  /** Settles an item of a batch that lost its connection: its caller retries as usual. */
  fail(item: T, error: unknown): void;
}

/** Options of a group writer. */
export interface GroupWriterOptions {
  /**
   * Each statement waits one turn of the event loop before it goes out, so the items added in
   * that turn share it: those of callers answered by the previous statement together, who come
   * back in the same turn, and those that arrive side by side (decision 059).
   */
  readonly gather?: boolean;
}

/**
 * Group commit with one statement in flight: the first item is written at once (or after one
 * turn: when gathering, or when added `afterTurn`); the items that arrive meanwhile go together
 * in the next statement, up to `maxBatch`. A batch the database refuses is written item by
 * item, so one bad item never fails the others; a lost connection fails the whole batch. Shared
 * by the engine's checkpoints and events and the API's stream slot releases (decisions 050, 053,
 * 058, 059).
 */
export class GroupWriter<T> {
  private waiting: T[] = [];
  private busy = false;

  constructor(
    private readonly maxBatch: number,
    private readonly write: GroupWrite<T>,
    private readonly options: GroupWriterOptions = {},
  ) {}

  /**
   * Queues `item` and starts writing unless a statement is in flight or being gathered (it then
   * goes in the next one). `afterTurn`: the statement waits for the end of this turn of the event
   * loop, so the items added in the same turn go in it; otherwise it goes at once, unless the
   * writer gathers anyway.
   */
  add(item: T, afterTurn = false): void {
    this.waiting.push(item);
    if (!this.busy) void this.drain(afterTurn);
  }

  private async drain(afterTurn: boolean): Promise<void> {
    this.busy = true;
    let wait = afterTurn;
    try {
      for (;;) {
        if ((wait || this.options.gather === true) && this.waiting.length < this.maxBatch) await nextTurn();
        wait = false;
        if (this.waiting.length === 0) break;
        const batch = this.waiting.splice(0, this.maxBatch);
        if (batch.length === 1) {
          await this.write.one(batch[0]!);
          continue;
        }
        try {
          await this.write.many(batch);
        } catch (error) {
          if (isConnectionFailure(error)) {
            for (const item of batch) this.write.fail(item, error);
            continue;
          }
          // A refusal names no item: write them one by one, so only the refused one fails.
          await Promise.all(batch.map((item) => this.write.one(item)));
        }
      }
    } finally {
      this.busy = false;
    }
  }
}

/** Resolves after the event loop's current turn: its I/O answers and the work they started. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

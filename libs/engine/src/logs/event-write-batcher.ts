import { noEngineMetrics, type EngineMetrics } from '../base/metrics';
import type { Queryable } from '../base/ports';
import type { PendingEvent } from '../base/store';
import { publishEvents, type EventNote } from '../sql/events';
import { GroupWriter } from '../base/group-writer';
import * as eventSql from '../sql/events';

/** `announced`: the statement sent the other nodes' notification itself (the batcher was given a note). */
export type EventWriteResult = { lastSeq: number; at: Date; announced?: boolean } | null;

/** Publish-tick lanes per window (see `tick`): an execution's lane comes from its ID. */
export const TICK_LANES = 4;

/** An execution's publish-tick lane, 0 to TICK_LANES - 1: its ID's last hex digit, spread over the lanes. */
export function tickLaneOf(executionId: string): number {
  return parseInt(executionId.charAt(executionId.length - 1), 16) % TICK_LANES;
}

/** Most executions one statement carries (its notification names them all: 64 IDs are well under NOTIFY's 8,000 bytes). */
const MAX_BATCH = 64;

interface Pending {
  readonly executionId: string;
  readonly generation: number;
  readonly events: readonly PendingEvent[];
  readonly done: (result: EventWriteResult, error?: unknown) => void;
}

/**
 * Group commit for events published while phases run (EVT-01): the first write goes at once,
 * the writes of other executions that arrive meanwhile go together in one statement. Each
 * execution's events keep its own fence (generation, not ended) and consecutive sequence
 * numbers; its publisher never has two writes in flight, so its order is kept. A refused batch
 * is written execution by execution; a lost connection fails the batch and each publisher retries.
 * With a `note`, each statement also sends the NOTIFY for the executions it stored, so no separate
 * notification statement follows (it commits with the rows, outside any other transaction).
 */
export class EventWriteBatcher {
  private readonly writer: GroupWriter<Pending>;
  /** The next publish tick of each lane: one timer for every publisher of the lane waiting on this node. */
  private readonly nextTicks = new Map<number, Promise<void>>();

  constructor(
    /** Where the statements go: the node's own writer connection (decision 053), or a pool. */
    private readonly db: Queryable,
    private readonly metrics: EngineMetrics = noEngineMetrics,
    private readonly note?: EventNote,
  ) {
    this.writer = new GroupWriter<Pending>(MAX_BATCH, {
      one: (item) => this.writeOne(item),
      many: async (batch) => {
        const results = await this.writeMany(batch);
        this.metrics.eventBatchWritten(batch.length);
        for (const item of batch) item.done(results.get(item.executionId) ?? null);
      },
      fail: (item, error) => item.done(null, error),
    });
  }

  /**
   * Resolves at the next tick of `lane` (`tickLaneOf`): every `windowMs` on this process's clock, lane k offset by
   * k/TICK_LANES of a window. Every publisher of a lane waits for the same tick, so their writes
   * start together and go in one statement; the lanes spread a node's writes, and the hand-over
   * to its readers after each, over the window instead of one burst per window.
   */
  tick(windowMs: number, lane = 0): Promise<void> {
    const next = this.nextTicks.get(lane);
    if (next !== undefined) return next;
    const offset = (lane * windowMs) / TICK_LANES;
    const wait = windowMs - ((((performance.now() - offset) % windowMs) + windowMs) % windowMs);
    const tick = new Promise<void>((resolve) => {
      // Never what keeps a process alive: a waiting publisher belongs to a phase that does.
      setTimeout(() => {
        this.nextTicks.delete(lane);
        resolve();
      }, wait).unref();
    });
    this.nextTicks.set(lane, tick);
    return tick;
  }

  /**
   * Stores one execution's events. `gathered` (a write started by a tick): the statement waits
   * for the end of this turn of the event loop, so the writes of every publisher of the tick go
   * in it; otherwise (a phase's first event, a flush) it goes at once when nothing is in flight.
   */
  write(executionId: string, generation: number, events: readonly PendingEvent[], gathered = false): Promise<EventWriteResult> {
    return new Promise((resolve, reject) => {
      this.writer.add({ executionId, generation, events, done: (result, error) => (error === undefined ? resolve(result) : reject(error as Error)) }, gathered);
    });
  }

  private writeOne(item: Pending): Promise<void> {
    return publishEvents(this.db, item.executionId, item.generation, item.events, this.note).then(
      (result) => {
        this.metrics.eventBatchWritten(1);
        item.done(result === null ? null : { ...result, announced: this.note !== undefined });
      },
      (error: unknown) => item.done(null, error ?? new Error('event write failed')),
    );
  }

  private async writeMany(batch: readonly Pending[]): Promise<Map<string, EventWriteResult>> {
    const rows = batch.flatMap((item) => item.events.map((event, index) => ({ item, event, ord: index + 1 })));
    const { rows: written } = await this.db.query<{ id: string; last_seq: number; at: Date }>({
      ...eventSql.publishEventsBatch,
      values: [
        rows.map((r) => r.item.executionId),
        rows.map((r) => r.item.generation),
        rows.map((r) => r.event.type),
        rows.map((r) => r.event.step),
        rows.map((r) => r.event.attempt),
        rows.map((r) => r.event.keyId),
        rows.map((r) => r.event.data),
        rows.map((r) => r.ord),
        this.note?.channel ?? null,
        this.note?.origin ?? null,
      ],
    });
    return new Map(written.map((row) => [row.id, { lastSeq: row.last_seq, at: row.at, announced: this.note !== undefined }]));
  }
}

import type { Pool } from 'pg';
import { noEngineMetrics, type EngineMetrics } from './metrics';
import type { PendingEvent } from './store';
import { publishEvents } from './sql/events';
import { isConnectionFailure } from './storage-retry';
import * as eventSql from './sql/events';

export type EventWriteResult = { lastSeq: number; at: Date } | null;

/** Most executions one statement carries. */
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
 */
export class EventWriteBatcher {
  private waiting: Pending[] = [];
  private writing = false;

  constructor(
    private readonly pool: Pool,
    private readonly metrics: EngineMetrics = noEngineMetrics,
  ) {}

  write(executionId: string, generation: number, events: readonly PendingEvent[]): Promise<EventWriteResult> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ executionId, generation, events, done: (result, error) => (error === undefined ? resolve(result) : reject(error as Error)) });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, MAX_BATCH);
        if (batch.length === 1) {
          await this.writeOne(batch[0]!);
          continue;
        }
        try {
          const results = await this.writeMany(batch);
          this.metrics.eventBatchWritten(batch.length);
          for (const item of batch) item.done(results.get(item.executionId) ?? null);
        } catch (error) {
          if (isConnectionFailure(error)) {
            for (const item of batch) item.done(null, error);
            continue;
          }
          await Promise.all(batch.map((item) => this.writeOne(item)));
        }
      }
    } finally {
      this.writing = false;
    }
  }

  private writeOne(item: Pending): Promise<void> {
    return publishEvents(this.pool, item.executionId, item.generation, item.events).then(
      (result) => {
        this.metrics.eventBatchWritten(1);
        item.done(result);
      },
      (error: unknown) => item.done(null, error ?? new Error('event write failed')),
    );
  }

  private async writeMany(batch: readonly Pending[]): Promise<Map<string, EventWriteResult>> {
    const rows = batch.flatMap((item) => item.events.map((event, index) => ({ item, event, ord: index + 1 })));
    const { rows: written } = await this.pool.query<{ id: string; last_seq: number; at: Date }>({
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
      ],
    });
    return new Map(written.map((row) => [row.id, { lastSeq: row.last_seq, at: row.at }]));
  }
}

import type { ExecutionState } from '@openbot/domain';
import type { Pool } from 'pg';
import { checkpoint } from './sql/executions';
import { isConnectionFailure } from './storage-retry';
import * as executionSql from './sql/executions';

/** A checkpoint without events: the hot path of every phase. */
export interface PlainCheckpoint {
  readonly id: string;
  readonly generation: number;
  readonly keyId: string;
  readonly data: Buffer;
  readonly step: number;
  readonly state: ExecutionState;
}

export type CheckpointResult = { state: ExecutionState; cancelPhase: number } | null;

/** Most checkpoints one statement carries. */
const MAX_BATCH = 64;

/**
 * Group commit for plain checkpoints (docs/architecture.md: the engine's hot path). The first
 * checkpoint is written at once; those that arrive while a write is in flight go together in
 * the next statement — one round trip and one WAL flush for many executions. Each row keeps its
 * own fence (generation and `step = n-1`), so every caller gets exactly the answer the single
 * statement would give. A batch the database refuses is retried row by row, so one bad row
 * never fails the others; a lost connection fails them all, and each caller retries as usual.
 */
export class CheckpointBatcher {
  private waiting: Array<{ readonly checkpoint: PlainCheckpoint; readonly done: (result: CheckpointResult, error?: unknown) => void }> = [];
  private writing = false;

  constructor(private readonly pool: Pool) {}

  save(plain: PlainCheckpoint): Promise<CheckpointResult> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ checkpoint: plain, done: (result, error) => (error === undefined ? resolve(result) : reject(error as Error)) });
      if (!this.writing) void this.write();
    });
  }

  private async write(): Promise<void> {
    this.writing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, MAX_BATCH);
        if (batch.length === 1) {
          const only = batch[0]!;
          await checkpoint(this.pool, { ...only.checkpoint, events: [] }).then(
            (result) => only.done(result),
            (error: unknown) => only.done(null, error ?? new Error('checkpoint failed')),
          );
          continue;
        }
        try {
          const results = await this.writeMany(batch.map((item) => item.checkpoint));
          for (const item of batch) item.done(results.get(item.checkpoint.id) ?? null);
        } catch (error) {
          if (isConnectionFailure(error)) {
            for (const item of batch) item.done(null, error);
            continue;
          }
          // A refusal names no row: write them one by one, so only the refused one fails.
          await Promise.all(
            batch.map((item) =>
              checkpoint(this.pool, { ...item.checkpoint, events: [] }).then(
                (result) => item.done(result),
                (rowError: unknown) => item.done(null, rowError ?? new Error('checkpoint failed')),
              ),
            ),
          );
        }
      }
    } finally {
      this.writing = false;
    }
  }

  private async writeMany(batch: readonly PlainCheckpoint[]): Promise<Map<string, CheckpointResult>> {
    const { rows } = await this.pool.query<{ id: string; state: ExecutionState; cancel_phase: number }>({
      ...executionSql.checkpointBatch,
      values: [
        batch.map((c) => c.id),
        batch.map((c) => c.generation),
        batch.map((c) => c.keyId),
        batch.map((c) => c.data),
        batch.map((c) => c.step),
        batch.map((c) => c.state),
      ],
    });
    return new Map(rows.map((row) => [row.id, { state: row.state, cancelPhase: row.cancel_phase }]));
  }
}

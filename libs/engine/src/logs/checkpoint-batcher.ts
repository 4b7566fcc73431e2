import type { ExecutionState } from '@openbot/domain';
import type { Pool } from 'pg';
import { checkpoint } from '../sql/executions';
import { GroupWriter } from '../base/group-writer';
import * as executionSql from '../sql/executions';

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

interface Waiting {
  readonly checkpoint: PlainCheckpoint;
  readonly done: (result: CheckpointResult, error?: unknown) => void;
}

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
  private readonly writer: GroupWriter<Waiting>;

  constructor(private readonly pool: Pool) {
    this.writer = new GroupWriter<Waiting>(MAX_BATCH, {
      one: (item) =>
        checkpoint(this.pool, { ...item.checkpoint, events: [] }).then(
          (result) => item.done(result),
          (error: unknown) => item.done(null, error ?? new Error('checkpoint failed')),
        ),
      many: async (batch) => {
        const results = await this.writeMany(batch.map((item) => item.checkpoint));
        for (const item of batch) item.done(results.get(item.checkpoint.id) ?? null);
      },
      fail: (item, error) => item.done(null, error),
    }, { gather: true });
  }

  save(plain: PlainCheckpoint): Promise<CheckpointResult> {
    return new Promise((resolve, reject) => {
      this.writer.add({ checkpoint: plain, done: (result, error) => (error === undefined ? resolve(result) : reject(error as Error)) });
    });
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

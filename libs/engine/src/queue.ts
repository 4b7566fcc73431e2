import type { PgBoss } from 'pg-boss';
import type { Queryable } from './ports';

/** The one queue of the engine: its jobs carry only `{ executionId }` (SEC-01). */
export const ADVANCE_QUEUE = 'execution-advance';

export interface AdvanceJob {
  readonly executionId: string;
}

/**
 * Enqueues an advance job inside the caller's transaction (it commits or rolls back with the
 * state: the transactional outbox). pg-boss answers null when it dropped the job: an error here.
 */
export async function enqueueAdvance(boss: PgBoss, tx: Queryable, executionId: string, startAfterSeconds = 0): Promise<void> {
  const id = await boss.send(ADVANCE_QUEUE, { executionId } satisfies AdvanceJob, {
    ...(startAfterSeconds > 0 ? { startAfter: Math.ceil(startAfterSeconds) } : {}),
    db: { executeSql: async (text: string, values?: unknown[]) => ({ rows: (await tx.query(text, values)).rows }) },
  });
  if (id === null) throw new Error(`pg-boss dropped the advance job of execution ${executionId}`);
}

/**
 * Recovery jobs written outside a transaction, grouped: submits that arrive while a batch is
 * being written wait for the next one, and every batch is one INSERT (pg-boss `insert`).
 * Each caller resolves only once its own job is committed, so "job before execution" holds.
 */
export class RecoveryJobBatcher {
  private waiting: Array<{ executionId: string; startAfterSeconds: number; done: (error?: unknown) => void }> = [];
  private writing = false;

  constructor(private readonly boss: PgBoss) {}

  enqueue(executionId: string, startAfterSeconds: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ executionId, startAfterSeconds, done: (error) => (error === undefined ? resolve() : reject(error as Error)) });
      if (!this.writing) void this.write();
    });
  }

  private async write(): Promise<void> {
    this.writing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting;
        this.waiting = [];
        try {
          const ids = await this.boss.insert(
            ADVANCE_QUEUE,
            batch.map((job) => ({ data: { executionId: job.executionId } satisfies AdvanceJob, startAfter: Math.ceil(job.startAfterSeconds) })),
          );
          if (ids !== null && ids.length !== batch.length) throw new Error('pg-boss dropped recovery jobs');
          for (const job of batch) job.done();
        } catch (error) {
          for (const job of batch) job.done(error ?? new Error('recovery job insert failed'));
        }
      }
    } finally {
      this.writing = false;
    }
  }
}

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

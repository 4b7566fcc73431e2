import type { PgBoss } from 'pg-boss';
import type { Queryable } from './ports';

/** The one queue of the engine: its jobs carry only `{ executionId }` (SEC-01). */
export const ADVANCE_QUEUE = 'execution-advance';

/**
 * Options every pg-boss instance of a node takes (the engine's and the migration's): pg-boss
 * keeps no bookkeeping of its own beside ours.
 * - No instance registry: the engine's presence (presence.ts) says which nodes live, and the
 *   registry's health sampler wakes the event loop every 20 ms on an idle node.
 * - No OpenTelemetry: pg-boss would trace its job operations through the global API, which the
 *   app registers when traces are on, each job a trace of its own (even the inserts it only
 *   writes the SQL of). Traces are one per execution, and ours alone (decision 040).
 */
export const BOSS_OWN_BOOKKEEPING_OFF = { registerInstance: false, openTelemetry: { enabled: false } } as const;

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

/** pg-boss's insert of one advance job, built but not run: its SQL and its one (JSON) parameter. */
export interface AdvanceJobInsert {
  readonly text: string;
  readonly payload: string;
}

/**
 * Builds pg-boss's own insert of one advance job without running it: pg-boss hands the SQL to
 * the `db` we give it. The caller writes it in the same statement as the execution row
 * (`insertExecutionWithJob`, decision 051), so the two commit together and cost one round trip.
 * `startAfterSeconds` 0: due at once.
 */
export async function buildAdvanceJob(boss: PgBoss, executionId: string, startAfterSeconds: number): Promise<AdvanceJobInsert> {
  const built: { value: AdvanceJobInsert | null } = { value: null };
  await boss.insert(ADVANCE_QUEUE, [{ data: { executionId } satisfies AdvanceJob, startAfter: Math.ceil(startAfterSeconds) }], {
    db: {
      executeSql: (text: string, values?: unknown[]) => {
        const payload = values?.[0];
        if (values?.length !== 1 || typeof payload !== 'string') throw new Error('pg-boss built a job insert with parameters this engine cannot carry');
        built.value = { text, payload };
        return Promise.resolve({ rows: [] });
      },
    },
  });
  if (built.value === null) throw new Error('pg-boss built no job insert');
  return built.value;
}

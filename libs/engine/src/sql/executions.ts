import type { ExecutionState } from '@openbot/domain';
import { createHash } from 'node:crypto';
import type { Queryable } from '../base/ports';
import type { AdvanceJobInsert } from '../base/queue';
import type { ExecutionRow, NewExecution, PendingEvent } from '../base/store';
import { bumpSeqs, eventColumns } from './events';
import { FINAL_STATES, type Statement } from './statement';

/**
 * The SQL of an execution's own row: insert, select, claim, identity, take-over, checkpoint,
 * leases, release, requeue, waits, pause, unknown outcomes, end, and the facts features read.
 * Every state write is fenced by `generation` (EXE-03/04).
 */

const EXECUTION_COLUMNS = `id, workflow, organization_id, scope_kind, scope_id, resource_type, resource_id, parent_id,
  attached, state, step, generation, owner_node, (lease_until IS NOT NULL AND lease_until > now()) AS leased,
  cancel_phase, paused, key_id, data, error_id, category`;

/** What a feature may read of an execution (execution-reads.ts): no data, no identity, no lease internals. */
export const FACTS_COLUMNS = `id, workflow, state, generation, organization_id, scope_kind, scope_id, resource_type, resource_id, parent_id, attached, paused, error_id, category`;

/** The INSERT of one execution row, its parameters numbered from `$first`. */
function insertExecutionText(first: number): string {
  const p = (n: number): string => `$${first + n - 1}`;
  return `INSERT INTO executions (id, workflow, organization_id, scope_kind, scope_id, resource_type, resource_id, parent_id,
             attached, state, owner_node, lease_until, key_id, data, identity_key_id, identity)
           VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)}, ${p(9)}, ${p(10)}, ${p(11)},
             CASE WHEN ${p(12)}::float8 IS NULL THEN NULL ELSE now() + make_interval(secs => ${p(12)}::float8) END, ${p(13)}, ${p(14)}, ${p(15)}, ${p(16)})`;
}

function insertExecutionValues(row: NewExecution, leaseSeconds: number | null): unknown[] {
  return [
    row.id,
    row.workflow,
    row.organization_id,
    row.scope_kind,
    row.scope_id,
    row.resource_type,
    row.resource_id,
    row.parent_id,
    row.attached,
    row.state,
    row.owner_node,
    leaseSeconds,
    row.key_id,
    row.data,
    row.identity_key_id,
    row.identity,
  ];
}

export async function insertExecution(db: Queryable, row: NewExecution, leaseSeconds: number | null): Promise<void> {
  await db.query({ name: 'engine.insert_execution', text: insertExecutionText(1), values: insertExecutionValues(row, leaseSeconds) });
}

/** Statement names of `insertExecutionWithJob`, one per distinct pg-boss insert text. */
const withJobNames = new Map<string, string>();

/**
 * Inserts an execution and its advance job in one statement (decision 051): pg-boss's own job
 * insert (`buildAdvanceJob`) runs as a CTE of the execution's INSERT, so both commit together or
 * not at all, in one round trip. Should pg-boss ever build a statement that cannot be a CTE (its
 * insert for a notifying queue starts with WITH), the job is written first, then the row.
 */
export async function insertExecutionWithJob(db: Queryable, row: NewExecution, leaseSeconds: number | null, job: AdvanceJobInsert): Promise<void> {
  if (!/^\s*INSERT\s/i.test(job.text)) {
    // Both sent at once, in this order: a caller may write COMMIT right behind them (CommitBehind).
    await Promise.all([db.query(job.text, [job.payload]), insertExecution(db, row, leaseSeconds)]);
    return;
  }
  let name = withJobNames.get(job.text);
  if (name === undefined) {
    name = `engine.insert_execution_job_${createHash('sha256').update(job.text).digest('hex').slice(0, 16)}`;
    withJobNames.set(job.text, name);
  }
  await db.query({ name, text: `WITH job AS (${job.text}) ${insertExecutionText(2)}`, values: [job.payload, ...insertExecutionValues(row, leaseSeconds)] });
}

const selectPlain: Statement = {
  name: 'engine.select_execution',
  text: `SELECT ${EXECUTION_COLUMNS} FROM executions WHERE id = $1`,
};

const selectForUpdate: Statement = {
  name: 'engine.select_execution_for_update',
  text: `SELECT ${EXECUTION_COLUMNS} FROM executions WHERE id = $1 FOR UPDATE`,
};

export async function selectExecution(db: Queryable, id: string, forUpdate = false): Promise<ExecutionRow | null> {
  const { rows } = await db.query<ExecutionRow>({
    ...(forUpdate ? selectForUpdate : selectPlain),
    values: [id],
  });
  return rows[0] ?? null;
}

/** Which of these executions have ended, in one read without a lock: a final state never changes. */
export async function endedAmong(db: Queryable, ids: readonly string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>({
    name: 'engine.ended_among',
    text: `SELECT id FROM executions WHERE id = ANY($1::uuid[]) AND state IN ${FINAL_STATES}`,
    values: [ids],
  });
  return new Set(rows.map((r) => r.id));
}

/** The row a claim locks: with the sealed identity the new run checks and carries (IDN-06). */
export async function selectForClaim(db: Queryable, id: string): Promise<ExecutionRow | null> {
  const { rows } = await db.query<ExecutionRow>({
    name: 'engine.select_execution_for_claim',
    text: `SELECT ${EXECUTION_COLUMNS}, identity_key_id, identity FROM executions WHERE id = $1 FOR UPDATE`,
    values: [id],
  });
  return rows[0] ?? null;
}

/** The sealed identity of an execution (a child or a continuation copies it). */
export async function selectIdentity(db: Queryable, id: string): Promise<{ identity_key_id: string | null; identity: Buffer | null } | null> {
  const { rows } = await db.query<{ identity_key_id: string | null; identity: Buffer | null }>({
    name: 'engine.select_identity',
    text: 'SELECT identity_key_id, identity FROM executions WHERE id = $1',
    values: [id],
  });
  return rows[0] ?? null;
}

/** Takes ownership: generation + 1 under the row lock the caller holds (EXE-03). */
export async function takeOver(db: Queryable, id: string, node: string, leaseSeconds: number): Promise<{ generation: number; state: ExecutionState }> {
  const { rows } = await db.query<{ generation: number; state: ExecutionState }>({
    name: 'engine.take_over',
    text: `UPDATE executions SET generation = generation + 1, owner_node = $2,
             lease_until = now() + make_interval(secs => $3::float8),
             state = CASE WHEN state IN ('queued', 'waiting') THEN 'running' ELSE state END, updated_at = now()
           WHERE id = $1 RETURNING generation, state`,
    values: [id, node, leaseSeconds],
  });
  return rows[0]!;
}

/**
 * The checkpoint of a phase, as one statement (STC-01): the sealed state, the step and the
 * phase's events commit together, only while `generation` still matches. It changes no indexed
 * column (not the lease, which the runner renews, nor `updated_at`), so PostgreSQL writes it as a
 * heap-only update: no index entries, a fraction of the WAL (decision 050).
 * A cancel request that arrived meanwhile is kept (`cancelling` is never overwritten).
 * Only the step after the saved one is written, so a retry after a lost reply cannot apply
 * it twice. Answers null when nothing was written: the execution was lost (EXE-04), or this
 * very checkpoint had already committed (the caller tells the two apart).
 */
export async function checkpoint(
  db: Queryable,
  c: {
    id: string;
    generation: number;
    keyId: string;
    data: Buffer;
    step: number;
    state: ExecutionState;
    events: readonly PendingEvent[];
  },
): Promise<{ state: ExecutionState; cancelPhase: number } | null> {
  if (c.events.length === 0) {
    // Most phases emit nothing: the same write without the event insert.
    const { rows } = await db.query<{ state: ExecutionState; cancel_phase: number }>({
      name: 'engine.checkpoint_plain',
      text: `UPDATE executions SET key_id = $3, data = $4, step = $5,
               state = CASE WHEN state = 'cancelling' THEN state ELSE $6 END
             WHERE id = $1 AND generation = $2 AND step = $5 - 1
             RETURNING state, cancel_phase`,
      values: [c.id, c.generation, c.keyId, c.data, c.step, c.state],
    });
    const row = rows[0];
    return row ? { state: row.state, cancelPhase: row.cancel_phase } : null;
  }
  const { rows } = await db.query<{ state: ExecutionState; cancel_phase: number }>({
    name: 'engine.checkpoint',
    text: `WITH upd AS (
             UPDATE executions SET key_id = $3, data = $4, step = $5,
               state = CASE WHEN state = 'cancelling' THEN state ELSE $6 END
             WHERE id = $1 AND generation = $2 AND step = $5 - 1
             RETURNING id, $7::int AS n, state, cancel_phase
           ), ${bumpSeqs('upd')}, ev AS (
             INSERT INTO execution_events (execution_id, seq, type, step, attempt, key_id, data)
             SELECT $1, seq.last_seq - $7 + e.ord, e.type, e.step, e.attempt, e.key_id, e.data
               FROM seq, unnest($8::text[], $9::int[], $10::int[], $11::text[], $12::bytea[])
                    WITH ORDINALITY AS e(type, step, attempt, key_id, data, ord)
           )
           SELECT state, cancel_phase FROM upd`,
    values: [
      c.id,
      c.generation,
      c.keyId,
      c.data,
      c.step,
      c.state,
      c.events.length,
      ...eventColumns(c.events),
    ],
  });
  const row = rows[0];
  return row ? { state: row.state, cancelPhase: row.cancel_phase } : null;
}

/**
 * The CTE `locked` that locks the execution rows matching `where` (over alias `x`) in ID order.
 * Every statement that locks many execution rows takes them this way first (a phase publish
 * shares them in the same order): in any other order two of them could deadlock, and PostgreSQL
 * takes `deadlock_timeout` (1 s) to break it, stalling every stream in the batch.
 * `skipLocked`: rows another transaction holds are left out instead of waited for.
 */
function lockedInIdOrder(where: string, skipLocked = false): string {
  return `locked AS (SELECT x.id FROM executions x WHERE ${where} ORDER BY x.id FOR UPDATE${skipLocked ? ' SKIP LOCKED' : ''})`;
}

/**
 * Renews this node's leases on the executions it runs; answers the IDs it renewed. The one
 * statement for all of them never waits for a row lock: a row another transaction holds (its own
 * run's checkpoint or end, a child's end waking it as parent, a batched publish) is skipped, and
 * renewed afterwards on its own. Holding many rows while waiting for one would put the renewal
 * into lock cycles with transactions that lock a child and then its parent, which PostgreSQL
 * breaks only after `deadlock_timeout`; a statement that holds nothing while it waits cannot be
 * part of a cycle. `id = ANY($2)` lets the planner use the primary key (decision 065).
 */
export async function renewLeases(db: Queryable, node: string, owned: ReadonlyArray<{ id: string; generation: number }>, leaseSeconds: number): Promise<Set<string>> {
  if (owned.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>({
    name: 'engine.renew_leases',
    text: `WITH o AS (
             SELECT * FROM unnest($2::uuid[], $3::int[]) AS o(id, generation)
           ), ${lockedInIdOrder('x.id = ANY($2::uuid[])', true)}
           UPDATE executions e SET lease_until = now() + make_interval(secs => $4::float8)
             FROM o JOIN locked l ON l.id = o.id
            WHERE e.id = ANY($2::uuid[]) AND e.id = o.id AND e.generation = o.generation AND e.owner_node = $1 AND e.state IN ('queued', 'running', 'cancelling')
            RETURNING e.id`,
    values: [node, owned.map((o) => o.id), owned.map((o) => o.generation), leaseSeconds],
  });
  const renewed = new Set(rows.map((r) => r.id));
  for (const run of owned) {
    if (renewed.has(run.id)) continue;
    const { rowCount } = await db.query({ ...renewLease, values: [run.id, run.generation, node, leaseSeconds] });
    if (rowCount === 1) renewed.add(run.id);
  }
  return renewed;
}

const renewLease: Statement = {
  name: 'engine.renew_lease',
  text: `UPDATE executions SET lease_until = now() + make_interval(secs => $4::float8)
            WHERE id = $1 AND generation = $2 AND owner_node = $3 AND state IN ('queued', 'running', 'cancelling')`,
};

// ---- Statements the program loop and the engine run inline (their callers hold the logic). ----

/**
 * Plain checkpoints of many executions at once (checkpoint-batcher.ts); each row fenced by its
 * generation. Rows are locked in ID order first, so two statements touching the same rows cannot
 * deadlock. `id = ANY($1)` repeats what the join already implies, so the planner can use the
 * primary key on a table without statistics instead of scanning it (decision 065).
 */
export const checkpointBatch: Statement = {
  name: 'engine.checkpoint_batch',
  text: `WITH c AS (
               SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::bytea[], $5::int[], $6::text[])
                        AS c(id, generation, key_id, data, step, state)
             ), ${lockedInIdOrder('x.id = ANY($1::uuid[])')}
             UPDATE executions e SET key_id = c.key_id, data = c.data, step = c.step,
               state = CASE WHEN e.state = 'cancelling' THEN e.state ELSE c.state END
               FROM c JOIN locked l ON l.id = c.id
              WHERE e.id = ANY($1::uuid[]) AND e.id = c.id AND e.generation = c.generation AND e.step = c.step - 1
              RETURNING e.id, e.state, e.cancel_phase`,
};

export const releaseLeases: Statement = {
  name: 'engine.release_leases',
  text: `WITH ${lockedInIdOrder(`x.owner_node = $1 AND x.lease_until > now() AND x.state IN ('queued', 'running', 'cancelling')`)}
           UPDATE executions e SET lease_until = now(), updated_at = now()
             FROM locked l
            WHERE e.id = l.id AND e.owner_node = $1 AND e.lease_until > now() AND e.state IN ('queued', 'running', 'cancelling')
            RETURNING e.id`,
};

export const releaseUnknownWorkflow: Statement = {
  name: 'engine.release_unknown_workflow',
  text: 'UPDATE executions SET lease_until = now(), updated_at = now() WHERE id = $1 AND generation = $2',
};

export const requeue: Statement = {
  name: 'engine.requeue',
  text: `UPDATE executions SET state = 'queued', updated_at = now() WHERE id = $1`,
};

export const requeueResolved: Statement = {
  name: 'engine.requeue_resolved',
  text: `UPDATE executions SET state = CASE WHEN state = 'cancelling' THEN state ELSE 'queued' END, lease_until = NULL, updated_at = now()
                    WHERE id = $1 AND generation = $2 AND state IN ('running', 'cancelling')`,
};

export const saveWait: Statement = {
  name: 'engine.save_wait',
  text: `UPDATE executions SET key_id = $2, data = $3, step = $4,
                   state = CASE WHEN state = 'cancelling' THEN state WHEN $5 THEN 'running' ELSE 'waiting' END,
                   lease_until = CASE WHEN $5 THEN lease_until ELSE NULL END, updated_at = now()
                 WHERE id = $1`,
};

export const cancelWait: Statement = {
  name: 'engine.cancel_wait',
  text: `UPDATE executions SET key_id = $2, data = $3, lease_until = NULL, updated_at = now() WHERE id = $1`,
};

export const outcomeUnknown: Statement = {
  name: 'engine.outcome_unknown',
  text: `UPDATE executions SET state = 'outcome_unknown', key_id = $3, data = $4, step = $5, lease_until = NULL, updated_at = now()
                  WHERE id = $1 AND generation = $2 AND state <> 'cancelling'
                    AND EXISTS (SELECT 1 FROM execution_calls WHERE execution_id = $1 AND status = 'unknown')`,
};

export const resumeUnknown: Statement = {
  name: 'engine.resume_unknown',
  text: `UPDATE executions SET state = 'queued', lease_until = NULL, updated_at = now()
            WHERE id = $1 AND state = 'outcome_unknown'
              AND NOT EXISTS (SELECT 1 FROM execution_calls WHERE execution_id = $1 AND status = 'unknown')
            RETURNING id`,
};

export const end: Statement = {
  name: 'engine.end',
  text: `UPDATE executions SET state = $3, key_id = $4, data = $5, error_id = $6, category = $7,
             step = COALESCE($8::int, step), lease_until = NULL, ended_at = now(), updated_at = now()
           WHERE id = $1 AND generation = $2 AND state NOT IN ${FINAL_STATES}
             AND NOT (state = 'cancelling' AND $3 = 'completed')
           RETURNING parent_id, awaited`,
};

/**
 * The one-statement end. `$9`, when set, is the step of the last phase's result it also saves: the
 * row must then be at the step before it, the checkpoint's own fence (decision 056).
 */
export const endFast: Statement = {
  name: 'engine.end_fast',
  text: `WITH upd AS (
             UPDATE executions SET state = $3, key_id = $4, data = $5, step = COALESCE($9::int, step),
               lease_until = NULL, ended_at = now(), updated_at = now()
             WHERE id = $1 AND generation = $2 AND parent_id IS NULL AND NOT awaited
               AND state NOT IN ('completed', 'failed', 'cancelled', 'interrupted', 'cancelling')
               AND ($9::int IS NULL OR step = $9::int - 1)
             RETURNING id, 1 AS n
           ), ${bumpSeqs('upd')}
           INSERT INTO execution_events (execution_id, seq, type, key_id, data)
           SELECT $1, seq.last_seq, $6, $7, $8 FROM seq
           RETURNING seq, at`,
};

export const pause: Statement = {
  name: 'engine.pause',
  text: 'UPDATE executions SET paused = true, updated_at = now() WHERE id = $1',
};

export const resume: Statement = {
  name: 'engine.resume',
  text: `UPDATE executions SET paused = false, state = CASE WHEN state = 'waiting' THEN 'queued' ELSE state END, updated_at = now()
            WHERE id = $1 RETURNING state`,
};

export const park: Statement = {
  name: 'engine.park',
  text: `UPDATE executions SET state = 'waiting', lease_until = NULL, updated_at = now() WHERE id = $1`,
};

export const unpark: Statement = {
  name: 'engine.unpark',
  text: `UPDATE executions SET state = 'queued', lease_until = NULL, updated_at = now() WHERE id = $1`,
};

export const facts: Statement = {
  name: 'engine.facts',
  text: `SELECT ${FACTS_COLUMNS} FROM executions WHERE id = $1`,
};

/**
 * Executions unsettled since before `$1` seconds ago (the operator's stuck-work view), oldest
 * change first, after the row `$3` (the previous page's last; a row that changed since moves
 * and may be seen again), from the partial index `executions_unsettled_idx`. With their owner and
 * lease: who holds each, and whether it is live.
 */
export const unsettled: Statement = {
  name: 'engine.unsettled',
  text: `SELECT ${FACTS_COLUMNS}, owner_node, lease_until, updated_at, (lease_until IS NOT NULL AND lease_until > now()) AS leased
           FROM executions
          WHERE state IN ('waiting', 'outcome_unknown', 'cancelling') AND state = ANY($2::text[])
            AND updated_at < now() - make_interval(secs => $1::float8)
            AND ($3::uuid IS NULL OR (updated_at, id) > (SELECT a.updated_at, a.id FROM executions a WHERE a.id = $3::uuid))
          ORDER BY updated_at, id LIMIT $4`,
};

/** The access rule sits in the statement (IDN-08): a foreign ID reads as unknown. */
export const factsInOrganization: Statement = {
  name: 'engine.facts_in_organization',
  text: `SELECT ${FACTS_COLUMNS} FROM executions WHERE id = $1 AND organization_id = $2`,
};

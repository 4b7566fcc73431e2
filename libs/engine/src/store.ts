import type { ExecutionState } from '@openbot/domain';
import type { Queryable } from './ports';

/**
 * The engine's SQL, as named prepared statements on the pool TypeORM owns (docs/architecture.md:
 * the hot path avoids ORM overhead). Every state write is fenced by `generation` (EXE-03/04).
 */

export interface ExecutionRow {
  id: string;
  workflow: string;
  organization_id: string | null;
  scope_kind: string;
  scope_id: string;
  resource_type: string | null;
  resource_id: string | null;
  parent_id: string | null;
  attached: boolean;
  state: ExecutionState;
  step: number;
  generation: number;
  owner_node: string | null;
  leased: boolean;
  cancel_phase: number;
  /** A paused execution waits and is not run until resumed (TASK-02). */
  paused: boolean;
  last_seq: number;
  key_id: string;
  data: Buffer;
  error_id: string | null;
  category: string | null;
  /** The sealed identity (IDN-01): only read where a run starts (a claim), not by every select. */
  identity_key_id?: string | null;
  identity?: Buffer | null;
}

const EXECUTION_COLUMNS = `id, workflow, organization_id, scope_kind, scope_id, resource_type, resource_id, parent_id,
  attached, state, step, generation, owner_node, (lease_until IS NOT NULL AND lease_until > now()) AS leased,
  cancel_phase, paused, last_seq, key_id, data, error_id, category`;

export interface PendingEvent {
  readonly type: string;
  readonly step: number | null;
  readonly attempt: number | null;
  readonly keyId: string | null;
  readonly data: Buffer | null;
}

/** Pending events as the five parallel arrays the `unnest(…)` of an event insert takes. */
function eventColumns(events: readonly PendingEvent[]): [string[], Array<number | null>, Array<number | null>, Array<string | null>, Array<Buffer | null>] {
  return [events.map((e) => e.type), events.map((e) => e.step), events.map((e) => e.attempt), events.map((e) => e.keyId), events.map((e) => e.data)];
}

/** The columns a new execution is written with; the rest take their defaults. */
export type NewExecution = Pick<
  ExecutionRow,
  'id' | 'workflow' | 'organization_id' | 'scope_kind' | 'scope_id' | 'resource_type' | 'resource_id' | 'parent_id' | 'attached' | 'state' | 'owner_node' | 'key_id' | 'data'
> & { identity_key_id: string | null; identity: Buffer | null };

export async function insertExecution(db: Queryable, row: NewExecution, leaseSeconds: number | null): Promise<void> {
  await db.query({
    name: 'engine.insert_execution',
    text: `INSERT INTO executions (id, workflow, organization_id, scope_kind, scope_id, resource_type, resource_id, parent_id,
             attached, state, owner_node, lease_until, key_id, data, identity_key_id, identity)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
             CASE WHEN $12::float8 IS NULL THEN NULL ELSE now() + make_interval(secs => $12::float8) END, $13, $14, $15, $16)`,
    values: [
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
    ],
  });
}

export async function selectExecution(db: Queryable, id: string, forUpdate = false): Promise<ExecutionRow | null> {
  const { rows } = await db.query<ExecutionRow>({
    name: forUpdate ? 'engine.select_execution_for_update' : 'engine.select_execution',
    text: `SELECT ${EXECUTION_COLUMNS} FROM executions WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`,
    values: [id],
  });
  return rows[0] ?? null;
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
 * The checkpoint of a phase, as one statement (STC-01): the sealed state, the step, the
 * lease and the phase's events commit together, only while `generation` still matches.
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
    leaseSeconds: number;
    events: readonly PendingEvent[];
  },
): Promise<{ lastSeq: number; state: ExecutionState; cancelPhase: number } | null> {
  if (c.events.length === 0) {
    // Most phases emit nothing: the same write without the event insert.
    const { rows } = await db.query<{ last_seq: number; state: ExecutionState; cancel_phase: number }>({
      name: 'engine.checkpoint_plain',
      text: `UPDATE executions SET key_id = $3, data = $4, step = $5,
               state = CASE WHEN state = 'cancelling' THEN state ELSE $6 END,
               lease_until = now() + make_interval(secs => $7::float8), updated_at = now()
             WHERE id = $1 AND generation = $2 AND step = $5 - 1
             RETURNING last_seq, state, cancel_phase`,
      values: [c.id, c.generation, c.keyId, c.data, c.step, c.state, c.leaseSeconds],
    });
    const row = rows[0];
    return row ? { lastSeq: row.last_seq, state: row.state, cancelPhase: row.cancel_phase } : null;
  }
  const { rows } = await db.query<{ last_seq: number; state: ExecutionState; cancel_phase: number }>({
    name: 'engine.checkpoint',
    text: `WITH upd AS (
             UPDATE executions SET key_id = $3, data = $4, step = $5,
               state = CASE WHEN state = 'cancelling' THEN state ELSE $6 END,
               lease_until = now() + make_interval(secs => $7::float8), last_seq = last_seq + $8, updated_at = now()
             WHERE id = $1 AND generation = $2 AND step = $5 - 1
             RETURNING last_seq, state, cancel_phase
           ), ev AS (
             INSERT INTO execution_events (execution_id, seq, type, step, attempt, key_id, data)
             SELECT $1, upd.last_seq - $8 + e.ord, e.type, e.step, e.attempt, e.key_id, e.data
               FROM upd, unnest($9::text[], $10::int[], $11::int[], $12::text[], $13::bytea[])
                    WITH ORDINALITY AS e(type, step, attempt, key_id, data, ord)
           )
           SELECT last_seq, state, cancel_phase FROM upd`,
    values: [
      c.id,
      c.generation,
      c.keyId,
      c.data,
      c.step,
      c.state,
      c.leaseSeconds,
      c.events.length,
      ...eventColumns(c.events),
    ],
  });
  const row = rows[0];
  return row ? { lastSeq: row.last_seq, state: row.state, cancelPhase: row.cancel_phase } : null;
}

/** Appends events under the row lock the caller's transaction holds. */
export async function appendEvents(db: Queryable, id: string, events: readonly PendingEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const { rows } = await db.query<{ last_seq: number }>({
    name: 'engine.append_events',
    text: `WITH upd AS (UPDATE executions SET last_seq = last_seq + $2 WHERE id = $1 RETURNING last_seq), ev AS (
             INSERT INTO execution_events (execution_id, seq, type, step, attempt, key_id, data)
             SELECT $1, upd.last_seq - $2 + e.ord, e.type, e.step, e.attempt, e.key_id, e.data
               FROM upd, unnest($3::text[], $4::int[], $5::int[], $6::text[], $7::bytea[])
                    WITH ORDINALITY AS e(type, step, attempt, key_id, data, ord)
           ) SELECT last_seq FROM upd`,
    values: [
      id,
      events.length,
      ...eventColumns(events),
    ],
  });
  return rows[0]?.last_seq ?? 0;
}

/** Renews this node's leases on the executions it runs; answers the IDs it still owns. */
export async function renewLeases(db: Queryable, node: string, owned: ReadonlyArray<{ id: string; generation: number }>, leaseSeconds: number): Promise<Set<string>> {
  if (owned.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>({
    name: 'engine.renew_leases',
    text: `UPDATE executions e SET lease_until = now() + make_interval(secs => $4::float8)
             FROM unnest($2::uuid[], $3::int[]) AS o(id, generation)
            WHERE e.id = o.id AND e.generation = o.generation AND e.owner_node = $1
            RETURNING e.id`,
    values: [node, owned.map((o) => o.id), owned.map((o) => o.generation), leaseSeconds],
  });
  return new Set(rows.map((r) => r.id));
}

export interface EventRow {
  seq: number;
  type: string;
  step: number | null;
  attempt: number | null;
  at: Date;
  key_id: string | null;
  data: Buffer | null;
}

/**
 * Events after a cursor, and in the same read whether the execution has ended (so a reader
 * that has caught up knows whether more can come without a second query).
 */
export async function readEvents(db: Queryable, id: string, after: number, limit: number): Promise<{ ended: boolean; rows: EventRow[] }> {
  const { rows } = await db.query<EventRow & { ended: boolean }>({
    name: 'engine.read_events',
    text: `SELECT x.state IN ('completed', 'failed', 'cancelled', 'interrupted') AS ended,
                  e.seq, e.type, e.step, e.attempt, e.at, e.key_id, e.data
             FROM executions x
             LEFT JOIN LATERAL (
               SELECT seq, type, step, attempt, at, key_id, data FROM execution_events
                WHERE execution_id = x.id AND seq > $2 ORDER BY seq LIMIT $3
             ) e ON true
            WHERE x.id = $1`,
    values: [id, after, limit],
  });
  if (rows.length === 0) return { ended: true, rows: [] };
  return { ended: rows[0]!.ended, rows: rows[0]!.seq === null ? [] : rows };
}

/**
 * Publishes events of a running phase at once (text deltas, tool progress): appended only while
 * `generation` still owns the execution and it has not ended (CALL-05: an old owner publishes
 * nothing). Answers the last sequence number and the commit time, or null when fenced off.
 */
export async function publishEvents(
  db: Queryable,
  id: string,
  generation: number,
  events: readonly PendingEvent[],
): Promise<{ lastSeq: number; at: Date } | null> {
  if (events.length === 0) return null;
  const { rows } = await db.query<{ last_seq: number; at: Date }>({
    name: 'engine.publish_events',
    text: `WITH upd AS (
             UPDATE executions SET last_seq = last_seq + $3
              WHERE id = $1 AND generation = $2 AND state NOT IN ('completed', 'failed', 'cancelled', 'interrupted')
             RETURNING last_seq
           ), ev AS (
             INSERT INTO execution_events (execution_id, seq, type, step, attempt, key_id, data)
             SELECT $1, upd.last_seq - $3 + e.ord, e.type, e.step, e.attempt, e.key_id, e.data
               FROM upd, unnest($4::text[], $5::int[], $6::int[], $7::text[], $8::bytea[])
                    WITH ORDINALITY AS e(type, step, attempt, key_id, data, ord)
           ) SELECT last_seq, now() AS at FROM upd`,
    values: [
      id,
      generation,
      events.length,
      ...eventColumns(events),
    ],
  });
  const row = rows[0];
  return row ? { lastSeq: row.last_seq, at: row.at } : null;
}

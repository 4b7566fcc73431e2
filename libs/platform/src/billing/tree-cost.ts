import { executionReads, type Queryable } from '@openbot/engine';
import { LimitsUnreadable } from './limits-unreadable';

/**
 * Cost limits over a delegation tree (DLG-01). A task's spending counts toward its parent's too,
 * so a cap is checked against the cost of the capped execution and every task under it: each
 * usage record and hold belongs to exactly one execution, so a subtree sum counts it once.
 * Every read here throws when it fails: the caller then stops (no older sum, no missing cap).
 */

/**
 * What a subtree has cost so far: the known cost of its usage records, what its unknown records
 * keep reserved, and its open holds (what a reservation is checked against).
 */
export async function subtreeCost(db: Queryable, executionId: string): Promise<bigint> {
  const tree = await executionReads.subtree(db, executionId);
  const { rows } = await db.query<{ cost: string }>({
    name: 'billing.subtree_cost',
    text: `SELECT ((SELECT coalesce(sum(coalesce(r.cost_micros, CASE WHEN r.released_at IS NULL THEN r.reserved_micros END, 0)), 0)
                      FROM usage_records r WHERE r.execution_id = ANY($1::uuid[]))
                 + (SELECT coalesce(sum(h.reserved_micros), 0) FROM usage_holds h
                     WHERE h.execution_id = ANY($1::uuid[]) AND h.released_at IS NULL))::text AS cost`,
    values: [tree],
  });
  return BigInt(rows[0]!.cost);
}

/** What a subtree spent, as the execution view shows it: known costs, and how many calls have no known cost yet. */
export async function subtreeSpent(db: Queryable, executionId: string): Promise<{ readonly costMicros: number; readonly unknownCostCalls: number }> {
  const tree = await executionReads.subtree(db, executionId);
  const { rows } = await db.query<{ cost: string; unknown: number }>({
    name: 'billing.subtree_spent',
    text: `SELECT coalesce(sum(r.cost_micros), 0)::text AS cost, count(*) FILTER (WHERE r.cost_micros IS NULL)::int AS unknown
             FROM usage_records r WHERE r.execution_id = ANY($1::uuid[])`,
    values: [tree],
  });
  return { costMicros: Number(rows[0]!.cost), unknownCostCalls: rows[0]!.unknown };
}

/** A cost cap that applies to a call: the capped execution (the caller's own or an ancestor's). */
export interface CostCap {
  readonly executionId: string;
  readonly maxCostMicros: bigint;
}

/**
 * The cost caps of an execution's ancestors, the topmost first, as their Turns saved them with
 * their checkpoints (`execution_limits`, written before any of them started a task). Every
 * ancestor of a capped Turn is a Turn that saved its limits: one without a saved row is a read
 * that failed, never an ancestor without a cap (DLG-01).
 */
export async function ancestorCaps(db: Queryable, executionId: string): Promise<CostCap[]> {
  const ancestors = await executionReads.ancestors(db, executionId);
  if (ancestors.length === 0) return [];
  const { rows } = await db.query<{ id: string; cap: string | null }>({
    name: 'billing.ancestor_limits',
    text: `SELECT execution_id AS id, max_cost_micros::text AS cap FROM execution_limits WHERE execution_id = ANY($1::uuid[])`,
    values: [ancestors],
  });
  const saved = new Map(rows.map((r) => [r.id, r.cap]));
  const missing = ancestors.find((id) => !saved.has(id));
  if (missing !== undefined) throw new LimitsUnreadable(`the saved limits of ancestor ${missing}`);
  // The topmost first: the root's lock is the one every reservation under it takes.
  return ancestors
    .toReversed()
    .filter((id) => saved.get(id) !== null)
    .map((id) => ({ executionId: id, maxCostMicros: BigInt(saved.get(id)!) }));
}

/**
 * Serializes the reservations of every execution under the same topmost cap, so two tasks racing
 * for what is left of their parent's cap cannot both take it. Taken after the budget and credit
 * locks, in the same order by every reservation.
 */
export async function lockCostTree(db: Queryable, topmost: string): Promise<void> {
  await db.query({ name: 'billing.lock_cost_tree', text: `SELECT pg_advisory_xact_lock(hashtextextended('cost-tree:' || $1, 0))`, values: [topmost] });
}

/**
 * What is left under the tightest cap that applies to a call (its own and each ancestor's): the
 * least of each cap minus its subtree's cost, which a call's reservation may take at most
 * (decision 081). Null when no cap applies.
 */
export async function capRoom(db: Queryable, caps: readonly CostCap[]): Promise<bigint | null> {
  if (caps.length === 0) return null;
  await lockCostTree(db, caps[0]!.executionId);
  let room: bigint | null = null;
  for (const cap of caps) {
    const left = cap.maxCostMicros - (await subtreeCost(db, cap.executionId));
    if (room === null || left < room) room = left;
  }
  return room;
}

import type { Queryable } from '@openbot/engine';

/**
 * One batch of pruning (docs/decisions/041-retention.md): each is one statement, so one short
 * transaction; rows of ended executions only, which nothing else writes, locked with SKIP LOCKED
 * so two nodes' runs take different batches. The batch is found through a partial index that
 * holds only ended executions not yet pruned of that kind, by end time; the range read stops at
 * the shortest retention any organization has, and each row is then held to its own
 * organization's setting (or the platform default).
 *
 * Kept whatever the settings: the execution row (its final state and result), every other event
 * (`execution.ended` with the reply, `model.completed` with usage, tool results), usage records
 * and the audit log, which live in their own tables.
 */
export interface PruneBatch {
  /** The executions marked pruned by this batch; fewer than the batch size: none are due now. */
  readonly executions: number;
  /** The `text.delta` events removed, or the call results cleared. */
  readonly rows: number;
}

type PruneRow = { readonly executions: number; readonly rows: number };

const PRUNE_DELTAS = {
  name: 'retention.prune_deltas',
  text: `WITH due AS (
           SELECT e.id FROM executions e
             LEFT JOIN organization_retention r ON r.organization_id = e.organization_id
            WHERE e.ended_at IS NOT NULL AND e.deltas_pruned_at IS NULL
              AND e.ended_at <= $1::timestamptz - make_interval(days => LEAST($2::int, COALESCE((SELECT min(text_delta_days) FROM organization_retention), $2::int)))
              AND e.ended_at <= $1::timestamptz - make_interval(days => COALESCE(r.text_delta_days, $2::int))
            ORDER BY e.ended_at
            LIMIT $3
              FOR UPDATE OF e SKIP LOCKED
         ), removed AS (
           DELETE FROM execution_events v USING due WHERE v.execution_id = due.id AND v.type = 'text.delta' RETURNING 1
         ), marked AS (
           UPDATE executions x SET deltas_pruned_at = $1 FROM due WHERE x.id = due.id RETURNING 1
         )
         SELECT (SELECT count(*) FROM marked)::int AS executions, (SELECT count(*) FROM removed)::int AS rows`,
};

const PRUNE_PAYLOADS = {
  name: 'retention.prune_payloads',
  text: `WITH due AS (
           SELECT e.id FROM executions e
             LEFT JOIN organization_retention r ON r.organization_id = e.organization_id
            WHERE e.ended_at IS NOT NULL AND e.payloads_pruned_at IS NULL
              AND e.ended_at <= $1::timestamptz - make_interval(days => LEAST($2::int, COALESCE((SELECT min(call_payload_days) FROM organization_retention), $2::int)))
              AND e.ended_at <= $1::timestamptz - make_interval(days => COALESCE(r.call_payload_days, $2::int))
            ORDER BY e.ended_at
            LIMIT $3
              FOR UPDATE OF e SKIP LOCKED
         ), cleared AS (
           UPDATE execution_calls c SET result = NULL, key_id = NULL FROM due WHERE c.execution_id = due.id AND c.result IS NOT NULL RETURNING 1
         ), marked AS (
           UPDATE executions x SET payloads_pruned_at = $1 FROM due WHERE x.id = due.id RETURNING 1
         )
         SELECT (SELECT count(*) FROM marked)::int AS executions, (SELECT count(*) FROM cleared)::int AS rows`,
};

export type PruneKind = 'deltas' | 'payloads';

/** Prunes one batch of `kind` due at `now` (the engine's clock), by `defaultDays` where an organization set none. */
export async function pruneBatch(db: Queryable, kind: PruneKind, now: Date, defaultDays: number, batchSize: number): Promise<PruneBatch> {
  const statement = kind === 'deltas' ? PRUNE_DELTAS : PRUNE_PAYLOADS;
  const { rows } = await db.query<PruneRow>({ ...statement, values: [now, defaultDays, batchSize] });
  return rows[0] ?? { executions: 0, rows: 0 };
}

/** When the `text.delta` events of an execution were pruned, or null (what an event reader is told). */
export async function deltasPrunedAt(db: Queryable, executionId: string): Promise<Date | null> {
  const { rows } = await db.query<{ at: Date | null }>({
    name: 'retention.deltas_pruned_at',
    text: 'SELECT deltas_pruned_at AS at FROM executions WHERE id = $1',
    values: [executionId],
  });
  return rows[0]?.at ?? null;
}

import type { Statement } from './statement';

/**
 * Retention of ended executions (docs/decisions/041-retention.md). Each prune is one statement, so
 * one short transaction, over rows of ended executions only (nothing else writes them), locked
 * with SKIP LOCKED so two nodes' runs take different batches. The batch is found through a partial
 * index of the ended executions not yet pruned of that kind, by end time; the range read stops at
 * the shortest retention of any organization, then each row is held to its organization's days.
 *
 * $1 now (the engine's clock), $2 the default days, $3 the batch size, $4/$5 the organizations
 * with days of their own and those days.
 */
const due = (prunedColumn: string) => `o AS (SELECT * FROM unnest($4::uuid[], $5::int[]) AS o(organization_id, days)),
         due AS (
           SELECT e.id FROM executions e
             LEFT JOIN o ON o.organization_id = e.organization_id
            WHERE e.ended_at IS NOT NULL AND e.${prunedColumn} IS NULL
              AND e.ended_at <= $1::timestamptz - make_interval(days => LEAST($2::int, COALESCE((SELECT min(days) FROM o), $2::int)))
              AND e.ended_at <= $1::timestamptz - make_interval(days => COALESCE(o.days, $2::int))
            ORDER BY e.ended_at
            LIMIT $3
              FOR UPDATE OF e SKIP LOCKED
         )`;

/** Removes the `text.delta` events of a batch of due executions and marks them pruned. */
export const pruneDeltas: Statement = {
  name: 'engine.prune_deltas',
  text: `WITH ${due('deltas_pruned_at')}, removed AS (
           DELETE FROM execution_events v USING due WHERE v.execution_id = due.id AND v.type = 'text.delta' RETURNING 1
         ), marked AS (
           UPDATE executions x SET deltas_pruned_at = $1 FROM due WHERE x.id = due.id RETURNING 1
         )
         SELECT (SELECT count(*) FROM marked)::int AS executions, (SELECT count(*) FROM removed)::int AS rows`,
};

/** Clears the saved call results of a batch of due executions and marks them pruned. */
export const prunePayloads: Statement = {
  name: 'engine.prune_payloads',
  text: `WITH ${due('payloads_pruned_at')}, cleared AS (
           UPDATE execution_calls c SET result = NULL, key_id = NULL FROM due WHERE c.execution_id = due.id AND c.result IS NOT NULL RETURNING 1
         ), marked AS (
           UPDATE executions x SET payloads_pruned_at = $1 FROM due WHERE x.id = due.id RETURNING 1
         )
         SELECT (SELECT count(*) FROM marked)::int AS executions, (SELECT count(*) FROM cleared)::int AS rows`,
};

/** When an execution's `text.delta` events were pruned, or null. */
export const deltasPrunedAt: Statement = {
  name: 'engine.deltas_pruned_at',
  text: 'SELECT deltas_pruned_at AS at FROM executions WHERE id = $1',
};

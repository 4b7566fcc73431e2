import type { Queryable } from '../base/ports';
import * as retentionSql from '../sql/retention';

/** What one prune batch did. */
export interface PruneBatch {
  /** The executions marked pruned by this batch; fewer than the batch size: none are due now. */
  readonly executions: number;
  /** The `text.delta` events removed, or the call results cleared. */
  readonly rows: number;
}

export type PruneKind = 'deltas' | 'payloads';

/** How long ended executions keep what a prune removes: a default, and the organizations with days of their own. */
export interface RetentionDays {
  readonly defaultDays: number;
  readonly byOrganization: ReadonlyArray<{ readonly organizationId: string; readonly days: number }>;
}

/**
 * Prunes one batch of `kind` due at `now` (docs/decisions/041-retention.md). Kept whatever the
 * days: the execution row (its final state and result) and every other event; features keep
 * usage and audit in tables of their own.
 */
export async function pruneEndedBatch(db: Queryable, kind: PruneKind, now: Date, days: RetentionDays, batchSize: number): Promise<PruneBatch> {
  const statement = kind === 'deltas' ? retentionSql.pruneDeltas : retentionSql.prunePayloads;
  const { rows } = await db.query<PruneBatch>({
    ...statement,
    values: [now, days.defaultDays, batchSize, days.byOrganization.map((o) => o.organizationId), days.byOrganization.map((o) => o.days)],
  });
  return rows[0] ?? { executions: 0, rows: 0 };
}

/** When the `text.delta` events of an execution were pruned, or null (what an event reader is told). */
export async function deltasPrunedAt(db: Queryable, executionId: string): Promise<Date | null> {
  const { rows } = await db.query<{ at: Date | null }>({ ...retentionSql.deltasPrunedAt, values: [executionId] });
  return rows[0]?.at ?? null;
}

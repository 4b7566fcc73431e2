import { pruneEndedBatch, type PruneBatch, type PruneKind, type Queryable } from '@openbot/engine';

export { deltasPrunedAt, type PruneBatch, type PruneKind } from '@openbot/engine';

/**
 * One batch of pruning (docs/decisions/041-retention.md): the organizations' own days come from
 * `organization_retention` (a few rows: only organizations that set days of their own), and the
 * engine prunes its tables in one short statement.
 */
export async function pruneBatch(db: Queryable, kind: PruneKind, now: Date, defaultDays: number, batchSize: number): Promise<PruneBatch> {
  const column = kind === 'deltas' ? 'text_delta_days' : 'call_payload_days';
  const { rows } = await db.query<{ organization_id: string; days: number }>({
    name: `retention.days_${kind}`,
    text: `SELECT organization_id, ${column} AS days FROM organization_retention WHERE ${column} IS NOT NULL`,
  });
  return pruneEndedBatch(db, kind, now, { defaultDays, byOrganization: rows.map((r) => ({ organizationId: r.organization_id, days: r.days })) }, batchSize);
}

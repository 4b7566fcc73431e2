import { pruneEndedBatch, type PruneBatch, type PruneKind, type Queryable } from '@openbot/engine';
import type { RetentionDefaults } from '../../../platform/src/config/config';
import { effectiveDays } from './retention-view';

export { deltasPrunedAt, type PruneBatch, type PruneKind } from '@openbot/engine';

/**
 * One batch of pruning (docs/decisions/041-retention.md): the organizations' own days come from
 * `organization_retention` (a few rows: only organizations that set days of their own), and the
 * engine prunes its tables in one short statement.
 */
export async function pruneBatch(db: Queryable, kind: PruneKind, now: Date, defaults: RetentionDefaults, batchSize: number): Promise<PruneBatch> {
  const column = kind === 'deltas' ? 'text_delta_days' : 'call_payload_days';
  const defaultDays = kind === 'deltas' ? defaults.textDeltaDays : defaults.callPayloadDays;
  const { rows } = await db.query<{ organization_id: string; days: number }>({
    name: `retention.days_${kind}`,
    text: `SELECT organization_id, ${column} AS days FROM organization_retention WHERE ${column} IS NOT NULL`,
  });
  // Never longer than the operator's ceiling, also for a setting saved before it was lowered (decision 074).
  const byOrganization = rows.map((r) => ({ organizationId: r.organization_id, days: effectiveDays(r.days, defaultDays, defaults) }));
  return pruneEndedBatch(db, kind, now, { defaultDays: Math.min(defaultDays, defaults.maxDays), byOrganization }, batchSize);
}

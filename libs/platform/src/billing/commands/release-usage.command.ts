import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Conflict, isUuid, newId, NotFound, type MemberCaller } from '@openbot/domain';
import { recordAudit } from '../../audit/record-audit';
import { Database } from '../../database/sql';

export interface ReleasedUsage {
  readonly id: string;
  readonly releasedAt: Date;
  /** What the release charged: the record's reservation, now its cost. */
  readonly costMicros: number;
}

/**
 * An owner or admin settles an `unknown` usage record whose provider will never report (USE-04):
 * its reservation stops being held and is charged instead (decision 072). The reservation
 * becomes the record's cost, which budgets count as spent (its reserved tokens count on token
 * quotas), and, for an organization with credits, the one charge of the record, in the same
 * transaction: a release never makes a call free. The record stays unknown with its estimate; a
 * late result still fills in its tokens once, but its cost stays what was charged. Releasing
 * again changes nothing; a confirmed record has nothing to release (409 UsageSettled). The
 * release is audited (`usage.released`).
 */
export class ReleaseUsage extends Command<ReleasedUsage> {
  constructor(
    readonly caller: MemberCaller,
    readonly usageId: string,
  ) {
    super();
  }
}

@CommandHandler(ReleaseUsage)
export class ReleaseUsageHandler implements ICommandHandler<ReleaseUsage> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, usageId }: ReleaseUsage): Promise<ReleasedUsage> {
    if (!isUuid(usageId)) throw new NotFound('UsageRecord');
    return this.db.transaction(async (tx) => {
      // The row lock orders the release with a late result settling the same record.
      const row = await tx.one<{ status: string; releasedAt: Date | null; costMicros: string | null }>(
        `SELECT status, released_at AS "releasedAt", cost_micros::text AS "costMicros" FROM usage_records WHERE id = $1 AND organization_id = $2 FOR UPDATE`,
        [usageId, caller.organizationId],
      );
      if (row === undefined) throw new NotFound('UsageRecord');
      if (row.status !== 'unknown') throw new Conflict('UsageSettled', 'This usage record is confirmed: it holds no reservation.');
      if (row.releasedAt !== null) return { id: usageId, releasedAt: row.releasedAt, costMicros: Number(row.costMicros ?? 0) };
      const released = (await tx.one<{ releasedAt: Date; costMicros: string }>(
        `WITH released AS (
           UPDATE usage_records SET released_at = now(), cost_micros = coalesce(reserved_micros, 0)
            WHERE id = $1 AND organization_id = $2 RETURNING id, organization_id, released_at, cost_micros
         ), charge AS (
           INSERT INTO credit_entries (id, organization_id, amount_micros, kind, reason, usage_record_id)
           SELECT $3, r.organization_id, -r.cost_micros, 'charge', 'released unknown usage', r.id FROM released r
            WHERE r.cost_micros > 0 AND EXISTS (SELECT 1 FROM credit_accounts a WHERE a.organization_id = r.organization_id)
           ON CONFLICT (usage_record_id) DO NOTHING
         )
         SELECT released_at AS "releasedAt", cost_micros::text AS "costMicros" FROM released`,
        [usageId, caller.organizationId, newId()],
      ))!;
      const costMicros = Number(released.costMicros);
      await recordAudit(tx, { organizationId: caller.organizationId, actor: caller, action: 'usage.released', target: { type: 'usage-record', id: usageId }, details: { costMicros } });
      return { id: usageId, releasedAt: released.releasedAt, costMicros };
    });
  }
}

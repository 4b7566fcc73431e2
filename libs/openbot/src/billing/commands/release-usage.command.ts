import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Conflict, isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';

/**
 * An owner or admin releases what an `unknown` usage record keeps reserved (USE-04): its
 * provider will never report, and its hold should no longer count on budgets and credits. The
 * record stays unknown with its estimate; a late result still settles it once. Releasing again
 * changes nothing; a confirmed record has nothing to release (409 UsageSettled).
 */
export class ReleaseUsage extends Command<{ readonly id: string; readonly releasedAt: Date }> {
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

  async execute({ caller, usageId }: ReleaseUsage): Promise<{ readonly id: string; readonly releasedAt: Date }> {
    if (!isUuid(usageId)) throw new NotFound('UsageRecord');
    const row = await this.db.one<{ id: string; status: string; releasedAt: Date | null }>(
      `WITH released AS (
         UPDATE usage_records SET released_at = coalesce(released_at, now())
          WHERE id = $1 AND organization_id = $2 AND status = 'unknown' RETURNING id, released_at
       )
       SELECT u.id, u.status, r.released_at AS "releasedAt" FROM usage_records u LEFT JOIN released r ON r.id = u.id
        WHERE u.id = $1 AND u.organization_id = $2`,
      [usageId, caller.organizationId],
    );
    if (row === undefined) throw new NotFound('UsageRecord');
    if (row.releasedAt === null) throw new Conflict('UsageSettled', 'This usage record is confirmed: it holds no reservation.');
    return { id: row.id, releasedAt: row.releasedAt };
  }
}

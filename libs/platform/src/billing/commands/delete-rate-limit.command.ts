import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';
import { RATE_LIMIT_VIEW_COLUMNS, type RateLimitView } from '../billing-views';

/** Removes a rate limit: calls waiting for its bucket run at their next try. */
export class DeleteRateLimit extends Command<RateLimitView> {
  constructor(
    readonly caller: MemberCaller,
    readonly rateLimitId: string,
  ) {
    super();
  }
}

@CommandHandler(DeleteRateLimit)
export class DeleteRateLimitHandler implements ICommandHandler<DeleteRateLimit> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, rateLimitId }: DeleteRateLimit): Promise<RateLimitView> {
    const deleted = isUuid(rateLimitId)
      ? await this.db.one<RateLimitView>(`DELETE FROM rate_limits WHERE id = $1 AND organization_id = $2 RETURNING ${RATE_LIMIT_VIEW_COLUMNS}`, [rateLimitId, caller.organizationId])
      : undefined;
    if (deleted === undefined) throw new NotFound('RateLimit');
    return deleted;
  }
}

import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../database/sql';
import { RATE_LIMIT_VIEW_COLUMNS, type RateLimitView } from '../billing-views';

/** The organization's rate limits, oldest first. */
export class ListRateLimits extends Query<Page<RateLimitView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListRateLimits)
export class ListRateLimitsHandler implements IQueryHandler<ListRateLimits> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page }: ListRateLimits): Promise<Page<RateLimitView>> {
    const rows = await this.db.rows<RateLimitView>(
      `SELECT ${RATE_LIMIT_VIEW_COLUMNS} FROM rate_limits WHERE organization_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3`,
      [caller.organizationId, page.after, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

/** One rate limit of the caller's organization. */
export class GetRateLimit extends Query<RateLimitView> {
  constructor(
    readonly caller: MemberCaller,
    readonly rateLimitId: string,
  ) {
    super();
  }
}

@QueryHandler(GetRateLimit)
export class GetRateLimitHandler implements IQueryHandler<GetRateLimit> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, rateLimitId }: GetRateLimit): Promise<RateLimitView> {
    const row = isUuid(rateLimitId)
      ? await this.db.one<RateLimitView>(`SELECT ${RATE_LIMIT_VIEW_COLUMNS} FROM rate_limits WHERE id = $1 AND organization_id = $2`, [rateLimitId, caller.organizationId])
      : undefined;
    if (row === undefined) throw new NotFound('RateLimit');
    return row;
  }
}

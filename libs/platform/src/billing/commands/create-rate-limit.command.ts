import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { InvalidInput, newId, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';
import { RATE_LIMIT_VIEW_COLUMNS, type BudgetScopeKind, type RateLimitView } from '../billing-views';
import { scopeIssues } from '../scope-check';

export interface RateLimitInput {
  readonly scope: { readonly kind: BudgetScopeKind; readonly id: string | null };
  readonly requestsPerMinute: number | null;
  readonly tokensPerMinute: number | null;
}

/**
 * A rate limit of the organization, a Bot or a member (LIM-01): model calls and/or tokens per
 * minute, at least one. Its buckets start full and are shared by every node.
 */
export class CreateRateLimit extends Command<RateLimitView> {
  constructor(
    readonly caller: MemberCaller,
    readonly limit: RateLimitInput,
  ) {
    super();
  }
}

@CommandHandler(CreateRateLimit)
export class CreateRateLimitHandler implements ICommandHandler<CreateRateLimit> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, limit }: CreateRateLimit): Promise<RateLimitView> {
    const issues = await scopeIssues(this.db, caller.organizationId, limit.scope);
    if (limit.requestsPerMinute === null && limit.tokensPerMinute === null) {
      issues.push({ path: 'requestsPerMinute', message: 'set requestsPerMinute, tokensPerMinute or both' });
    }
    if (issues.length > 0) throw new InvalidInput(issues);
    return (await this.db.one<RateLimitView>(
      `INSERT INTO rate_limits (id, organization_id, scope_kind, scope_id, requests_per_minute, tokens_per_minute, requests_available, tokens_available)
       VALUES ($1, $2, $3, $4, $5::int, $6::int, $5::int, $6::int) RETURNING ${RATE_LIMIT_VIEW_COLUMNS}`,
      [newId(), caller.organizationId, limit.scope.kind, limit.scope.id, limit.requestsPerMinute, limit.tokensPerMinute],
    ))!;
  }
}

import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { InvalidInput, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';

export const USAGE_GROUPS = ['model', 'bot', 'member', 'day'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

export interface UsageSummaryRow {
  readonly key: string;
  readonly calls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** The sum of known costs; unknown calls are counted in `unknownCalls` instead. */
  readonly costMicros: number;
  readonly unknownCalls: number;
}

/** The grouping key of a usage record: the model, the Bot, the member (`service:<id>` for service-billed calls), or the UTC day. */
const KEYS: Record<UsageGroup, string> = {
  model: 'model',
  bot: `coalesce(bot_id::text, 'none')`,
  member: `CASE WHEN scope_kind = 'member' THEN scope_id::text ELSE scope_kind || ':' || scope_id::text END`,
  day: `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
};

/** The organization's usage in [from, to), grouped (PLAT-08): not paged, one row per key. */
export class UsageSummary extends Query<{ readonly data: readonly UsageSummaryRow[] }> {
  constructor(
    readonly caller: MemberCaller,
    readonly groupBy: UsageGroup,
    readonly from: Date,
    readonly to: Date,
  ) {
    super();
  }
}

@QueryHandler(UsageSummary)
export class UsageSummaryHandler implements IQueryHandler<UsageSummary> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, groupBy, from, to }: UsageSummary): Promise<{ readonly data: readonly UsageSummaryRow[] }> {
    if (from >= to) throw new InvalidInput([{ path: 'from', message: 'from must be before to' }]);
    const key = KEYS[groupBy];
    const data = await this.db.rows<UsageSummaryRow>(
      `SELECT ${key} AS key, count(*)::int AS calls,
              coalesce(sum(input_tokens), 0)::float8 AS "inputTokens", coalesce(sum(output_tokens), 0)::float8 AS "outputTokens",
              coalesce(sum(cost_micros), 0)::float8 AS "costMicros", (count(*) FILTER (WHERE status = 'unknown'))::int AS "unknownCalls"
         FROM usage_records WHERE organization_id = $1 AND created_at >= $2 AND created_at < $3
        GROUP BY 1 ORDER BY 1`,
      [caller.organizationId, from, to],
    );
    return { data };
  }
}

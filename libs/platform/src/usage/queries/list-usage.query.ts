import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { InvalidInput, isUuid, toPage, type InputIssue, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../database/sql';

/** One model call's usage as the API shows it (USE-01..04). */
export interface UsageRecordView {
  readonly id: string;
  readonly callId: string;
  readonly executionId: string;
  readonly botId: string | null;
  readonly chatId: string | null;
  readonly turnId: string | null;
  readonly model: string;
  /** `confirmed`: the provider reported the counts. `unknown`: it did not; the counts are null, never 0. */
  readonly status: 'confirmed' | 'unknown';
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  readonly estimatedInputTokens: number | null;
  /** The part of `inputTokens` read from a cache; null when not reported. */
  readonly cachedInputTokens: number | null;
  /** Computed once at the price in force when the call started; null while the usage is unknown. */
  readonly costMicros: number | null;
  readonly priceId: string | null;
  /** An owner or admin released what an unknown record kept reserved. */
  readonly releasedAt: Date | null;
  readonly billedTo: { readonly kind: string; readonly id: string };
  readonly createdAt: Date;
}

/** The organization's usage records, oldest first, optionally of one Bot and/or one Chat. */
export class ListUsage extends Query<Page<UsageRecordView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
    readonly filter: { readonly botId: string | null; readonly chatId: string | null },
  ) {
    super();
  }
}

@QueryHandler(ListUsage)
export class ListUsageHandler implements IQueryHandler<ListUsage> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page, filter }: ListUsage): Promise<Page<UsageRecordView>> {
    const issues: InputIssue[] = [];
    if (filter.botId !== null && !isUuid(filter.botId)) issues.push({ path: 'botId', message: 'botId must be a UUID' });
    if (filter.chatId !== null && !isUuid(filter.chatId)) issues.push({ path: 'chatId', message: 'chatId must be a UUID' });
    if (issues.length > 0) throw new InvalidInput(issues);
    const rows = await this.db.rows<UsageRecordView>(
      `SELECT id, call_id AS "callId", execution_id AS "executionId", bot_id AS "botId", chat_id AS "chatId", turn_id AS "turnId",
              model, status, input_tokens AS "inputTokens", output_tokens AS "outputTokens",
              estimated_input_tokens AS "estimatedInputTokens", cached_input_tokens AS "cachedInputTokens",
              cost_micros::float8 AS "costMicros", price_id AS "priceId", released_at AS "releasedAt", json_build_object('kind', scope_kind, 'id', scope_id) AS "billedTo",
              created_at AS "createdAt"
         FROM usage_records
        WHERE organization_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid)
          AND ($3::uuid IS NULL OR bot_id = $3::uuid) AND ($4::uuid IS NULL OR chat_id = $4::uuid)
        ORDER BY id LIMIT $5`,
      [caller.organizationId, page.after, filter.botId, filter.chatId, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

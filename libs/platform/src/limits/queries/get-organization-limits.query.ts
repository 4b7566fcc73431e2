import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { MemberCaller, OrganizationLimitName } from '@openbot/domain';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../config/runtime-config';
import { Database } from '../../database/sql';
import { usageOf } from '../organization-limits';
import { runningTurnsOf } from '../running-turns';

/** One limit as the organization stands against it: `used` null where nothing is held between requests. */
export interface LimitStanding {
  readonly limit: number;
  readonly used: number | null;
}

export type OrganizationLimitsView = Readonly<Record<OrganizationLimitName, LimitStanding>>;

/**
 * The caller's organization's limits (decision 076) and how much of each it uses now. `used` of
 * `queuedTurnsPerChat` is the most Turns queued in any one of its Chats; `toolCallsPerStep`
 * holds nothing between steps (null). A reading, not a reservation: the checks count again.
 */
export class GetOrganizationLimits extends Query<OrganizationLimitsView> {
  constructor(readonly caller: MemberCaller) {
    super();
  }
}

@QueryHandler(GetOrganizationLimits)
export class GetOrganizationLimitsHandler implements IQueryHandler<GetOrganizationLimits> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  async execute({ caller }: GetOrganizationLimits): Promise<OrganizationLimitsView> {
    const organizationId = caller.organizationId;
    const limits = this.config.organizationLimits;
    const [apiKeys, fileBytes, memoryItems, runningTurns, streams, queued] = await Promise.all([
      usageOf(this.db, organizationId, 'apiKeys'),
      usageOf(this.db, organizationId, 'fileBytes'),
      usageOf(this.db, organizationId, 'memoryItems'),
      runningTurnsOf(this.db, organizationId),
      this.db.one<{ open: number }>(
        'SELECT count(*)::int AS open FROM event_stream_slots WHERE credential = $1 AND expires_at > now()',
        [`organization:${organizationId}`],
      ),
      this.db.one<{ most: number }>(
        `SELECT coalesce(max(n), 0)::int AS most FROM (
           SELECT count(*) AS n FROM chat_turns t JOIN chats c ON c.id = t.chat_id
            WHERE c.organization_id = $1 AND t.state = 'queued' GROUP BY t.chat_id) q`,
        [organizationId],
      ),
    ]);
    return {
      apiKeys: { limit: limits.apiKeys, used: apiKeys },
      streams: { limit: limits.streams, used: streams!.open },
      queuedTurnsPerChat: { limit: limits.queuedTurnsPerChat, used: queued!.most },
      toolCallsPerStep: { limit: limits.toolCallsPerStep, used: null },
      runningTurns: { limit: limits.runningTurns, used: runningTurns },
      fileBytes: { limit: limits.fileBytes, used: fileBytes },
      memoryItems: { limit: limits.memoryItems, used: memoryItems },
    };
  }
}

import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { InvalidInput, isUuid, toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { APPROVAL_STATES, APPROVAL_VIEW_COLUMNS, type ApprovalState, type ApprovalView } from '../approval-view';
import { APPROVER_FROM, approverCondition, approverParams } from '../approver-rule';

export interface ApprovalFilter {
  readonly state?: string;
  readonly chatId?: string;
  readonly executionId?: string;
}

/**
 * The approvals of the caller's organization the caller may decide (the approver rule, decision
 * 075), newest first: descending UUIDv7 `id`, so `next` (the last ID of a page) continues with
 * older ones (`id < after`). The organization and the rule are in the query (IDN-08).
 */
export class ListApprovals extends Query<Page<ApprovalView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly filter: ApprovalFilter,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListApprovals)
export class ListApprovalsHandler implements IQueryHandler<ListApprovals> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, filter, page }: ListApprovals): Promise<Page<ApprovalView>> {
    const { state, chatId, executionId } = checkFilter(filter);
    const rows = await this.db.rows<ApprovalView>(
      `SELECT ${APPROVAL_VIEW_COLUMNS} FROM approvals
        WHERE organization_id = $1 AND ($2::uuid IS NULL OR id < $2::uuid) AND ($3::text IS NULL OR state = $3)
          AND ($4::uuid IS NULL OR chat_id = $4::uuid) AND ($5::uuid IS NULL OR execution_id = $5::uuid)
          AND EXISTS (SELECT 1 FROM approvals a ${APPROVER_FROM} WHERE a.id = approvals.id AND ${approverCondition(7)})
        ORDER BY id DESC LIMIT $6`,
      [caller.organizationId, page.after, state ?? null, chatId ?? null, executionId ?? null, page.limit + 1, ...approverParams(caller)],
    );
    return toPage(rows, page.limit);
  }
}

/** A filter value that cannot match is a 400 on its field, not an empty page. */
function checkFilter(filter: ApprovalFilter): { state?: ApprovalState; chatId?: string; executionId?: string } {
  const issues = [];
  if (filter.state !== undefined && !(APPROVAL_STATES as readonly string[]).includes(filter.state)) {
    issues.push({ path: 'state', message: `state must be one of ${APPROVAL_STATES.join(', ')}` });
  }
  if (filter.chatId !== undefined && !isUuid(filter.chatId)) issues.push({ path: 'chatId', message: 'chatId must be a Chat ID' });
  if (filter.executionId !== undefined && !isUuid(filter.executionId)) issues.push({ path: 'executionId', message: 'executionId must be an execution ID' });
  if (issues.length > 0) throw new InvalidInput(issues);
  return filter as { state?: ApprovalState; chatId?: string; executionId?: string };
}

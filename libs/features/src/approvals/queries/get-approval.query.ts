import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { APPROVAL_VIEW_COLUMNS, type ApprovalView } from '../approval-view';

/** One approval of the caller's organization; malformed, unknown and foreign IDs are one NotFound. */
export class GetApproval extends Query<ApprovalView> {
  constructor(
    readonly caller: MemberCaller,
    readonly approvalId: string,
  ) {
    super();
  }
}

@QueryHandler(GetApproval)
export class GetApprovalHandler implements IQueryHandler<GetApproval> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, approvalId }: GetApproval): Promise<ApprovalView> {
    if (!isUuid(approvalId)) throw new NotFound('Approval');
    const row = await this.db.one<ApprovalView>(`SELECT ${APPROVAL_VIEW_COLUMNS} FROM approvals WHERE id = $1 AND organization_id = $2`, [approvalId, caller.organizationId]);
    if (row === undefined) throw new NotFound('Approval');
    return row;
  }
}

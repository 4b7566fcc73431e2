import { Module } from '@nestjs/common';
import { DecideApprovalHandler } from './commands/decide-approval.command';
import { GetApprovalHandler } from './queries/get-approval.query';
import { ListApprovalsHandler } from './queries/list-approvals.query';

/** Approvals of tool calls (decision 025): the Turn writes and reads them; people decide them here. */
@Module({ providers: [ListApprovalsHandler, GetApprovalHandler, DecideApprovalHandler] })
export class ApprovalsModule {}

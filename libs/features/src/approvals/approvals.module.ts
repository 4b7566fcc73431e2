import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { Database } from '../../../platform/src/database/sql';
import { ApprovalGates } from '../../../platform/src/turn-core/approval-gate';
import { DecideApprovalHandler } from './commands/decide-approval.command';
import { GetApprovalHandler } from './queries/get-approval.query';
import { ListApprovalsHandler } from './queries/list-approvals.query';
import { turnApprovalGate } from './turn-approval-gate';

/**
 * Approvals of tool calls (decision 025): the Turn requests and reads them through the approval-gate
 * hook this feature registers (a port of the Turn core, decision 078); people decide them here.
 */
@Module({ providers: [ListApprovalsHandler, GetApprovalHandler, DecideApprovalHandler] })
export class ApprovalsModule implements OnModuleInit {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(ApprovalGates) private readonly gates: ApprovalGates,
  ) {}

  onModuleInit(): void {
    this.gates.register(turnApprovalGate(this.db));
  }
}

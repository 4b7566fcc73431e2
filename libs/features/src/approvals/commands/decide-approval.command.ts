import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Conflict, isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { recordAudit } from '../../../../platform/src/audit/record-audit';
import { APPROVAL_SIGNAL, TURN } from '../../../../platform/src/turn-core/turn-contract';
import { Database } from '../../../../platform/src/database/sql';
import { APPROVAL_VIEW_COLUMNS, type ApprovalDecision, type ApprovalView } from '../approval-view';
import { APPROVER_FROM, approverFacts, approverParams, assertApprover, type ApproverFacts } from '../approver-rule';

/**
 * A person's decision on a pending approval (decision 025). In one transaction: the Turn's
 * execution row is locked first (the order every Turn end takes too), the decision is saved on the
 * approval row, audited, and the Turn's wake-up signal is stored — so a decision made during a
 * restart or a takeover is never lost, and a lost notification only costs latency. Rows first:
 * the Turn reads the row, the signal only wakes it.
 *
 * Repeating the decision the approval already has changes nothing (200). Any other decision on a
 * decided, expired or cancelled approval is 409 ApprovalAlreadyDecided: of two racing members,
 * exactly one wins. Only an approver may decide (approver-rule.ts, decision 075): anyone else
 * of the organization gets 403 naming why, and nothing changes. What the decision grants is
 * checked again before the send (IDN-07): the engine asks whether the Turn's identity (member,
 * original token) is still valid then.
 */
export class DecideApproval extends Command<ApprovalView> {
  constructor(
    readonly caller: MemberCaller,
    readonly approvalId: string,
    readonly decision: ApprovalDecision,
    readonly reason: string | null,
  ) {
    super();
  }
}

@CommandHandler(DecideApproval)
export class DecideApprovalHandler implements ICommandHandler<DecideApproval> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, approvalId, decision, reason }: DecideApproval): Promise<ApprovalView> {
    if (!isUuid(approvalId)) throw new NotFound('Approval');
    // Who may decide is the approver rule (decision 075), checked before anything is locked or signalled.
    const target = await this.db.one<{ executionId: string } & ApproverFacts>(
      `SELECT a.execution_id AS "executionId", ${approverFacts(3)} FROM approvals a ${APPROVER_FROM} WHERE a.id = $1 AND a.organization_id = $2`,
      [approvalId, caller.organizationId, ...approverParams(caller)],
    );
    if (target === undefined) throw new NotFound('Approval');
    assertApprover(target);
    const wanted = decision === 'approve' ? 'approved' : 'denied';
    return this.db.transaction(async (tx) => {
      // The wake-up first: it locks the execution row, before the approval row (no deadlock with the Turn's end).
      const woken = await TURN.signal(this.engine.in(tx), target.executionId, APPROVAL_SIGNAL, { approvalId });
      const current = await tx.one<{ state: string; expired: boolean }>(
        `SELECT state, expires_at IS NOT NULL AND expires_at <= now() AS expired FROM approvals WHERE id = $1 FOR UPDATE`,
        [approvalId],
      );
      if (current!.state === wanted) return readView(tx, approvalId);
      if (current!.state !== 'pending' || current!.expired || !woken) {
        throw new Conflict('ApprovalAlreadyDecided', `This approval is ${current!.state === 'pending' ? 'expired' : current!.state}; it cannot be decided again.`);
      }
      await tx.count(
        `UPDATE approvals SET state = $2, decided_at = now(), decided_by_kind = 'member', decided_by_id = $3, reason = $4 WHERE id = $1`,
        [approvalId, wanted, caller.memberId, reason],
      );
      const view = await readView(tx, approvalId);
      await recordAudit(tx, {
        organizationId: caller.organizationId,
        actor: caller,
        action: decision === 'approve' ? 'approval.approved' : 'approval.denied',
        target: { type: 'approval', id: approvalId },
        details: { executionId: view.executionId, callId: view.callId, toolName: view.toolName, ...(reason === null ? {} : { reason }) },
      });
      return view;
    });
  }
}

async function readView(tx: { one<T>(sql: string, params: readonly unknown[]): Promise<T | undefined> }, approvalId: string): Promise<ApprovalView> {
  return (await tx.one<ApprovalView>(`SELECT ${APPROVAL_VIEW_COLUMNS} FROM approvals WHERE id = $1`, [approvalId]))!;
}

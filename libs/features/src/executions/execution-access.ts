import { canSteerOthersWork, Forbidden, isUuid, NotFound, type Caller, type MemberCaller } from '@openbot/domain';
import { executionReads, type ExecutionFacts } from '@openbot/engine';
import { recordAudit } from '../../../platform/src/audit/record-audit';
import type { Sql } from '../../../platform/src/database/sql';

/**
 * The access rule of the execution routes, applied inside SQL (IDN-08): a member reads its
 * organization's executions only; platform executions (no organization) are never visible
 * through organization endpoints (IDN-11). Malformed, unknown and foreign IDs are one NotFound.
 */
export async function visibleExecution(db: Sql, caller: MemberCaller, executionId: string): Promise<ExecutionFacts> {
  if (!isUuid(executionId)) throw new NotFound('Execution');
  const execution = await executionReads.byId(db, executionId, { organizationId: caller.organizationId });
  if (execution === null) throw new NotFound('Execution');
  return execution;
}

export async function assertExecutionVisible(db: Sql, caller: MemberCaller, executionId: string): Promise<void> {
  await visibleExecution(db, caller, executionId);
}

/**
 * The rule of the routes that write into an execution's work (an outcome_unknown decision): it
 * must be visible, and the caller its actor (the member it works as: `scope`, which its children
 * inherit), an owner or an admin. Another member could otherwise decide what the work goes on
 * believing, under its actor's identity.
 */
export async function assertExecutionSteerable(db: Sql, caller: MemberCaller, executionId: string): Promise<void> {
  const { scope } = await visibleExecution(db, caller, executionId);
  const ownWork = scope.kind === 'member' && scope.id === caller.memberId;
  if (!ownWork && !canSteerOthersWork(caller)) {
    throw new Forbidden("Only the member this execution works for, an owner or an admin may decide another member's execution.");
  }
}

/**
 * The platform operator acting on any execution (the stuck-work view): it must exist, and the
 * action is recorded in its organization's audit log first (platform executions have no
 * organization and no audit log). Members go through the member rules above.
 */
export async function authorizeExecutionAction(db: Sql, caller: Caller, executionId: string, action: 'cancel' | 'decide', details: Record<string, unknown>): Promise<void> {
  if (caller.kind === 'member') {
    if (action === 'cancel') await assertExecutionVisible(db, caller, executionId);
    else await assertExecutionSteerable(db, caller, executionId);
    return;
  }
  if (!isUuid(executionId)) throw new NotFound('Execution');
  const execution = await executionReads.byId(db, executionId);
  if (execution === null) throw new NotFound('Execution');
  if (execution.organizationId !== null) {
    await recordAudit(db, {
      organizationId: execution.organizationId,
      actor: caller,
      action: action === 'cancel' ? 'execution.cancel-requested' : 'execution.decision-requested',
      target: { type: 'execution', id: executionId },
      details: { state: execution.state, kind: execution.kind, ...details },
    });
  }
}

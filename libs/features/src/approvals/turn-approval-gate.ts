import { newId } from '@openbot/domain';
import type { Sql } from '../../../platform/src/database/sql';
import type { ApprovalGate, ApprovalRequest, Gate } from '../../../platform/src/turn-core/approval-gate';
import type { GatedCall } from '../../../platform/src/turn-core/turn-state';

/**
 * The Approvals feature's side of the Turn's approval gate (decision 025, REL-02, decision 078):
 * there is no process-wide gate or map of approvals. A request is written in the Turn's
 * checkpoint transaction with the saved calls; the Turn reads its own approval rows (rows first:
 * a decision is saved before the signal that wakes the Turn), so a decision made during a
 * takeover or a restart is never lost.
 */
export function turnApprovalGate(db: Sql): ApprovalGate {
  return {
    request: requestApproval,
    read: (executionId, gated, now) => readGate(db, executionId, gated, now),
  };
}

/** Writes one approval request: who may decide it (the tool's `approvers`) and the rights the Turn runs with (decision 075). */
function requestApproval(write: (sql: string, params: readonly unknown[]) => void, request: ApprovalRequest): void {
  const approvers = request.tool.approvers ?? {};
  write(
    `INSERT INTO approvals (id, organization_id, execution_id, chat_id, turn_id, call_id, step, tool_name, arguments, requested_at, expires_at,
                            approver_roles, approver_member_ids, second_person, turn_permissions)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::text[], $13::uuid[], $14, $15::text[]) ON CONFLICT (execution_id, step, call_id) DO NOTHING`,
    [
      request.approvalId,
      request.organizationId,
      request.executionId,
      request.chatId,
      request.turnId,
      request.call.callId,
      request.step,
      request.call.name,
      request.call.arguments,
      request.requestedAt,
      request.expiresAt,
      [...(approvers.roles ?? [])],
      [...(approvers.members ?? [])],
      approvers.secondPerson === true,
      request.turnPermissions === null ? null : [...request.turnPermissions],
    ],
  );
}

/** The current decision on a gated call. A pending approval past its expiry (engine clock) expires here. */
async function readGate(db: Sql, executionId: string, gated: GatedCall, now: number): Promise<Gate> {
  const row = await db.one<Gate>({
    name: 'turn.approval_gate',
    // The expiry and a decision race on the row: whichever update commits first wins (the other finds it decided).
    // An expiry is audited in the same statement (every decision is in the audit log), by the platform.
    text: `WITH expired AS (
             UPDATE approvals SET state = 'expired', decided_at = $4
              WHERE id = $1 AND execution_id = $2 AND state = 'pending' AND $3::boolean
             RETURNING id, state, reason, organization_id, execution_id, call_id, tool_name
           ), audited AS (
             INSERT INTO audit_events (id, organization_id, actor_kind, actor_id, action, target_type, target_id, details)
             SELECT $5::uuid, organization_id, 'platform', NULL, 'approval.expired', 'approval', id::text,
                    jsonb_build_object('executionId', execution_id, 'callId', call_id, 'toolName', tool_name)
               FROM expired
           )
           SELECT id AS "approvalId", state, reason FROM expired
           UNION ALL
           SELECT id, state, reason FROM approvals WHERE id = $1 AND execution_id = $2 AND NOT EXISTS (SELECT 1 FROM expired)`,
    values: [gated.approvalId, executionId, gated.expiresAt !== null && now >= gated.expiresAt, new Date(now), newId()],
  });
  // The record commits with the saved call (APPR-01): a missing one is a broken invariant, never a yes.
  if (row === undefined) throw new Error(`approval ${gated.approvalId} of call ${gated.callId} is missing`);
  return row;
}


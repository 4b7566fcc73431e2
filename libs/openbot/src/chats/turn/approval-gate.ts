import { newId } from '@openbot/domain';
import type { Sql } from '../../database/sql';
import type { GatedCall } from './turn-state';

/**
 * The approval gate of one Turn (decision 025, REL-02): there is no process-wide gate or map of
 * approvals. The Turn reads its own approval rows (rows first: a decision is saved before the
 * signal that wakes the Turn), so a decision made during a takeover or a restart is never lost.
 */
export type GateState = 'pending' | 'approved' | 'denied' | 'expired' | 'cancelled';

export interface Gate {
  readonly approvalId: string;
  readonly state: GateState;
  readonly reason: string | null;
}

/** The current decision on a gated call. A pending approval past its expiry (engine clock) expires here. */
export async function readGate(db: Sql, executionId: string, gated: GatedCall, now: number): Promise<Gate> {
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

/** What the model reads for a call a person did not approve. */
export function refusalOutput(name: string, gate: Gate): string {
  const why = gate.state === 'expired' ? 'the approval expired before anyone decided' : gate.state === 'cancelled' ? 'the approval was cancelled' : 'a person denied it';
  return `Error: the call to "${name}" was not run: ${why}.${gate.reason ? ` Reason: ${gate.reason}` : ''}`;
}

/** The earliest expiry of the calls still waiting for a decision, as a timer. */
export function nextExpiry(gated: readonly GatedCall[], waiting: ReadonlySet<string>): number | null {
  let earliest: number | null = null;
  for (const g of gated) {
    if (!waiting.has(g.callId) || g.expiresAt === null) continue;
    earliest = earliest === null ? g.expiresAt : Math.min(earliest, g.expiresAt);
  }
  return earliest;
}

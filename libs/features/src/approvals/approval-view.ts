/** The states of an approval (decision 025). */
export const APPROVAL_STATES = ['pending', 'approved', 'denied', 'expired', 'cancelled'] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];

export const APPROVAL_DECISIONS = ['approve', 'deny'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

/** What the API may show of an approval. */
export interface ApprovalView {
  readonly id: string;
  readonly executionId: string;
  readonly chatId: string;
  readonly turnId: string;
  readonly callId: string;
  readonly toolName: string;
  /** The call's arguments as the model sent them (its JSON text). */
  readonly arguments: string;
  readonly state: ApprovalState;
  readonly requestedAt: Date;
  readonly expiresAt: Date | null;
  readonly decidedAt: Date | null;
  readonly decidedBy: { readonly kind: 'member' | 'service'; readonly id: string } | null;
  readonly reason: string | null;
}

/** The columns of an ApprovalView, for handlers that read `approvals` (also in RETURNING). */
export const APPROVAL_VIEW_COLUMNS = `id, execution_id AS "executionId", chat_id AS "chatId", turn_id AS "turnId", call_id AS "callId",
  tool_name AS "toolName", arguments, state, requested_at AS "requestedAt", expires_at AS "expiresAt", decided_at AS "decidedAt",
  CASE WHEN decided_by_kind IS NULL THEN NULL ELSE json_build_object('kind', decided_by_kind, 'id', decided_by_id) END AS "decidedBy", reason`;

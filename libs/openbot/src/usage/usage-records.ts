import { newId } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';

/** Who a model call was made for and what it asked (USE-01): the billing identity of one call ID. */
export interface UsageCall {
  readonly organizationId: string;
  readonly scopeKind: string;
  readonly scopeId: string;
  readonly botId: string | null;
  readonly chatId: string | null;
  readonly turnId: string | null;
  readonly executionId: string;
  /** The call log's row of the attempt: one usage record per call ID. */
  readonly callId: string;
  readonly model: string;
  readonly estimatedInputTokens: number;
}

export interface ConfirmedUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

const COLUMNS = `id, organization_id, scope_kind, scope_id, bot_id, chat_id, turn_id, execution_id, call_id,
                 model, status, input_tokens, output_tokens, estimated_input_tokens, settled_at`;

function values(call: UsageCall, usage: ConfirmedUsage | null): unknown[] {
  return [
    newId(),
    call.organizationId,
    call.scopeKind,
    call.scopeId,
    call.botId,
    call.chatId,
    call.turnId,
    call.executionId,
    call.callId,
    call.model,
    usage ? 'confirmed' : 'unknown',
    usage?.inputTokens ?? null,
    usage?.outputTokens ?? null,
    call.estimatedInputTokens,
  ];
}

/**
 * Usage records (USE-01, USE-02, USE-04): one per call ID. `unknown` keeps the estimate in its
 * own field, never zero, and blocks nothing. The one settle path: confirmed usage that arrives
 * for a call recorded `unknown` (an old owner's late result, CALL-05) makes it `confirmed` once;
 * a confirmed record never changes again, however often that result arrives.
 */
export const usageRecords = {
  /** A saved model result: confirmed when the provider reported usage, else unknown with the estimate. */
  async record(tx: Queryable, call: UsageCall, usage: ConfirmedUsage | null): Promise<void> {
    await tx.query({
      name: 'usage.record',
      text: `INSERT INTO usage_records (${COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, CASE WHEN $11 = 'confirmed' THEN now() END)
             ON CONFLICT (call_id) DO UPDATE
               SET status = 'confirmed', input_tokens = EXCLUDED.input_tokens, output_tokens = EXCLUDED.output_tokens, settled_at = now()
             WHERE usage_records.status = 'unknown' AND EXCLUDED.status = 'confirmed'`,
      values: values(call, usage),
    });
  },

  /**
   * An attempt closed without its result (a new owner abandoned it after a takeover): it may
   * have used tokens, so it is `unknown` with its estimate until a late result settles it.
   */
  async recordUnsettled(tx: Queryable, call: UsageCall): Promise<void> {
    await tx.query({
      name: 'usage.record_unsettled',
      text: `INSERT INTO usage_records (${COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, NULL)
             ON CONFLICT (call_id) DO NOTHING`,
      values: values(call, null),
    });
  },
};

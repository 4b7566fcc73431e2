import { newId } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import { COST_SQL } from '../billing/prices';

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
  /**
   * The attempt's hold (its call key and attempt number): the price in force when it started and
   * what it reserved. Absent, the call has no price (it costs 0) and reserved nothing.
   */
  readonly hold?: { readonly callKey: string; readonly attempt: number };
}

export interface ConfirmedUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** The part of `inputTokens` read from a provider cache, when the provider reports it. */
  readonly cachedInputTokens?: number | null;
}

const COLUMNS = `id, organization_id, scope_kind, scope_id, bot_id, chat_id, turn_id, execution_id, call_id,
                 model, status, input_tokens, output_tokens, estimated_input_tokens, settled_at,
                 cached_input_tokens, price_id, cost_micros, reserved_micros, reserved_tokens`;

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
    usage?.cachedInputTokens ?? null,
    call.hold?.callKey ?? null,
    call.hold?.attempt ?? null,
    newId(),
  ];
}

/** The attempt's hold and its price: what the record is charged at and what it keeps reserved while unknown. */
const HOLD_AND_PRICE = `h AS (SELECT price_id, reserved_micros, reserved_tokens FROM usage_holds
                               WHERE execution_id = $8 AND call_key = $16 AND attempt = $17::int),
                        p AS (SELECT * FROM prices WHERE id = (SELECT price_id FROM h))`;

const RECORD_VALUES = `($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::int, $13::int, $14, CASE WHEN $11 = 'confirmed' THEN now() END,
                        $15::int, (SELECT price_id FROM h),
                        CASE WHEN $11 = 'confirmed' THEN coalesce((SELECT ${COST_SQL('$12::int', '$15::int', '$13::int')} FROM p), 0) END,
                        (SELECT reserved_micros FROM h), (SELECT reserved_tokens FROM h))`;

/**
 * Usage records (USE-01, USE-02, USE-04): one per call ID. `unknown` keeps the estimate in its
 * own field, never zero, blocks no new call, and keeps what its attempt reserved on budgets and
 * credits. The one settle path: confirmed usage that arrives for a call recorded `unknown` (an
 * old owner's late result, CALL-05) makes it `confirmed` once; a confirmed record never changes
 * again, however often that result arrives. Its cost is computed once, at the price its attempt
 * started with (PLAT-08), and its one credits charge commits in the same statement (USE-01). A
 * record an owner released was charged its reservation then: a late result fills in its tokens
 * and keeps that cost and charge (decision 072).
 */
export const usageRecords = {
  /**
   * A saved model result: confirmed when the provider reported usage, else unknown with the
   * estimate. The same statement releases the holds of the call's attempts (USE-03).
   */
  async record(tx: Queryable, call: UsageCall, usage: ConfirmedUsage | null): Promise<{ costMicros: number } | null> {
    const { rows } = await tx.query<{ cost_micros: string }>({
      name: 'usage.record',
      text: `WITH ${HOLD_AND_PRICE},
             rec AS (
               INSERT INTO usage_records (${COLUMNS}) VALUES ${RECORD_VALUES}
               ON CONFLICT (call_id) DO UPDATE
                 SET status = 'confirmed', input_tokens = EXCLUDED.input_tokens, output_tokens = EXCLUDED.output_tokens,
                     cached_input_tokens = EXCLUDED.cached_input_tokens, price_id = EXCLUDED.price_id,
                     -- A released record was charged its reservation: that stays its cost (decision 072).
                     cost_micros = CASE WHEN usage_records.released_at IS NULL THEN EXCLUDED.cost_micros ELSE usage_records.cost_micros END,
                     settled_at = now()
               WHERE usage_records.status = 'unknown' AND EXCLUDED.status = 'confirmed'
               RETURNING id, organization_id, status, cost_micros
             ),
             -- One charge per confirmed record, only for an organization with credits; a duplicate result changes no row above.
             charge AS (
               INSERT INTO credit_entries (id, organization_id, amount_micros, kind, reason, usage_record_id)
               SELECT $18, rec.organization_id, -rec.cost_micros, 'charge', 'model call', rec.id FROM rec
                WHERE rec.status = 'confirmed' AND rec.cost_micros > 0
                  AND EXISTS (SELECT 1 FROM credit_accounts a WHERE a.organization_id = rec.organization_id)
               ON CONFLICT (usage_record_id) DO NOTHING
             ),
             released AS (
               UPDATE usage_holds SET released_at = now() WHERE execution_id = $8 AND call_key = $16 AND released_at IS NULL
             )
             -- The cost of a record confirmed now (metrics count it once; decision 034).
             SELECT cost_micros FROM rec WHERE status = 'confirmed'`,
      values: values(call, usage),
    });
    return rows[0] ? { costMicros: Number(rows[0].cost_micros) } : null;
  },

  /**
   * An attempt closed without its result (a new owner abandoned it after a takeover): it may
   * have used tokens, so it is `unknown` with its estimate, keeping what it reserved, until a
   * late result settles it or an owner releases it.
   */
  async recordUnsettled(tx: Queryable, call: UsageCall): Promise<void> {
    await tx.query({
      name: 'usage.record_unsettled',
      text: `WITH ${HOLD_AND_PRICE}
             INSERT INTO usage_records (${COLUMNS}) VALUES ${RECORD_VALUES}
             ON CONFLICT (call_id) DO NOTHING`,
      // Without the charge's ID: no statement parameter may go unused.
      values: values(call, null).slice(0, 17),
    });
  },
};

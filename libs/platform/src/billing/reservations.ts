import { newId } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import type { DefaultPrice } from '../config/config';
import type { Database } from '../database/sql';
import { ANY_LIMIT_SQL, budgetUsage, type BillingScope } from './budget-usage';
import { LimitsUnreadable } from './limits-unreadable';
import { fitOutput } from './output-fit';
import { COST_SQL, costOf, prices, type Price } from './prices';
import { rateBuckets } from './rate-buckets';
import { ancestorCaps, capRoom } from './tree-cost';

/** One attempt of a model call about to send (USE-02, USE-03). */
export interface ReservationRequest extends BillingScope {
  readonly executionId: string;
  readonly callKey: string;
  readonly attempt: number;
  readonly model: string;
  readonly estimatedInputTokens: number;
  /** The most `max_tokens` the request may send (the per-call cap within the run's output limit): the reservation's output part when every limit affords it. */
  readonly maxTokens: number;
  /**
   * The fewest output tokens worth sending (OPENBOT_MODEL_CALL_MIN_TOKENS, used up to `maxTokens`):
   * when a limit affords less than `maxTokens`, the reservation lowers it down to this floor, and
   * below it refuses (decision 081). Absent: the call reserves its whole `maxTokens` or nothing.
   */
  readonly minTokens?: number;
  /** The run's cost cap (a Bot's `limits.maxCostMicros`, a task's at most what its parent had left): its tree's saved usage plus reservations stay within it, and within every ancestor's (DLG-01). */
  readonly maxCostMicros?: number | null;
  /** The operator's default price (OPENBOT_DEFAULT_PRICE): what prices a call under credits whose model the platform has not priced (decision 072). */
  readonly defaultPrice?: DefaultPrice | null;
}

export type Reservation =
  /**
   * `maxTokens`: what the request sends and the hold reserves, at most the request's own, lowered to
   * what the tightest limit affords (decision 081). `bucketsTook`: the rate limits' buckets took the
   * estimate (confirmed usage corrects them then, and only then).
   */
  | { readonly reserved: true; readonly maxTokens: number; readonly bucketsTook: boolean }
  | { readonly reserved: false; readonly budgetId: string | null }
  /** The run's own cost cap has no room for this call. */
  | { readonly reserved: false; readonly maxCost: true }
  /** A rate limit's bucket has not enough yet: try again after `waitMs` (LIM-01). Nothing was taken. */
  | { readonly reserved: false; readonly waitMs: number }
  /** The organization has credits and its model has no platform price (and the operator set no default): decision 072. */
  | { readonly reserved: false; readonly unpriced: true };

/**
 * Reserves an attempt's estimate before it sends (USE-02, USE-03), in one transaction: the price
 * in force now (the call is priced by it, whatever changes later; under credits the platform's
 * or the operator's default, else refused: decision 072), the applicable budgets locked
 * in ID order, then the organization's credit account: one lock order for every reservation, so
 * concurrent reservations queue instead of deadlocking, and twenty calls racing for the last
 * credits cannot together reserve more than is left. What every limit still affords, read after
 * those locks, sets the attempt's `max_tokens`: the request's own, lowered to the tightest
 * limit's room after the input estimate, never below the floor (decision 081). Last, the rate
 * limits' buckets (LIM-01).
 * Refused, nothing is reserved and nothing is sent. Granted, the hold row carries the price, the reserved micros and tokens, and releases
 * the holds earlier attempts of the same call left open (a takeover's old owner is gone).
 */
export async function reserve(db: Database, request: ReservationRequest): Promise<Reservation> {
  try {
    return await reserveChecked(db, request);
  } catch (error) {
    // Whatever could not be read or taken, the call does not send on a guess (DLG-01).
    throw error instanceof LimitsUnreadable ? error : new LimitsUnreadable('the saved usage and limits', { cause: error });
  }
}

async function reserveChecked(db: Database, request: ReservationRequest): Promise<Reservation> {
  // Most organizations have no budget, credits or rate limit: one read says so and finds the
  // price, and the hold is written on its own, with no lock taken. A limit created while this call
  // starts applies from the next call on.
  if (await holdUnlimited(db, request)) return { reserved: true, maxTokens: request.maxTokens, bucketsTook: false };
  return db.transaction(async (tx) => {
    const locked = await budgetUsage.lockApplicable(tx, request);
    const hasCredits = await budgetUsage.lockCredits(tx, request.organizationId);
    // An earlier attempt of this call is over (its unknown record, if any, keeps its reservation):
    // its hold must not count twice against this attempt.
    await tx.query({
      name: 'billing.release_earlier_holds',
      text: 'UPDATE usage_holds SET released_at = now() WHERE execution_id = $1 AND call_key = $2 AND attempt < $3 AND released_at IS NULL',
      values: [request.executionId, request.callKey, request.attempt],
    });
    // Under credits only the platform prices a call (an organization's own version, even one set
    // before its first grant, never does), and a model the platform has not priced does not send.
    const price = hasCredits
      ? await prices.forCredits(tx, request.organizationId, request.model, request.defaultPrice ?? null)
      : await prices.inForce(tx, request.organizationId, request.model);
    if (hasCredits && price === null) return { reserved: false, unpriced: true };
    // The run's cap and its ancestors', from what their trees saved and hold: a takeover or a
    // restart sees the same sums (DLG-01). A task under a capped parent always has a cap of its
    // own (it inherits what is left), so a run without one has no capped ancestor either.
    const capped = request.maxCostMicros !== undefined && request.maxCostMicros !== null;
    const caps = capped ? [...(await ancestorCaps(tx, request.executionId)), { executionId: request.executionId, maxCostMicros: BigInt(request.maxCostMicros!) }] : [];
    const capRoomMicros = await capRoom(tx, caps);
    // Read after the locks, in one statement: every reservation committed before them is counted.
    const { budgets, credits } = await budgetUsage.lockedStanding(tx, request.organizationId, locked, hasCredits);
    // The most every limit affords after the input estimate, never below the floor (decision 081).
    const fit = fitOutput(
      { price, estimatedInputTokens: request.estimatedInputTokens, maxTokens: request.maxTokens, minTokens: request.minTokens ?? request.maxTokens },
      { capRoomMicros, budgets, credits },
    );
    if ('refused' in fit) return { reserved: false, ...fit.refused };
    // The rate limits' buckets last, in ID order; a refusal rolls back everything taken above.
    const wait = await rateBuckets.take(tx, request, request.estimatedInputTokens, true);
    if (wait !== null) return { reserved: false, waitMs: wait.waitMs };
    await openHold(tx, request, price, needOf(price, request.estimatedInputTokens, fit.maxTokens));
    return { reserved: true, maxTokens: fit.maxTokens, bucketsTook: true };
  });
}

/** What an attempt reserves: its input estimate plus the `max_tokens` it sends, priced and in tokens. */
function needOf(price: Price | null, estimatedInputTokens: number, maxTokens: number): { readonly micros: bigint; readonly tokens: bigint } {
  return {
    micros: costOf(price, { inputTokens: estimatedInputTokens, outputTokens: maxTokens }),
    tokens: BigInt(estimatedInputTokens + maxTokens),
  };
}

/** The hold of one attempt; opening it releases the holds earlier attempts of the same call left open. */
async function openHold(db: Queryable, request: ReservationRequest, price: Price | null, need: { readonly micros: bigint; readonly tokens: bigint }): Promise<void> {
  await db.query({
    name: 'billing.open_hold',
    text: `WITH earlier AS (
             UPDATE usage_holds SET released_at = now()
              WHERE execution_id = $3 AND call_key = $4 AND attempt < $5 AND released_at IS NULL
           )
           INSERT INTO usage_holds (id, organization_id, execution_id, call_key, attempt, estimated_input_tokens,
                                    scope_kind, scope_id, bot_id, price_id, reserved_micros, reserved_tokens)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (execution_id, call_key, attempt) DO NOTHING`,
    values: [
      newId(),
      request.organizationId,
      request.executionId,
      request.callKey,
      request.attempt,
      request.estimatedInputTokens,
      request.scopeKind,
      request.scopeId,
      request.botId,
      price?.id ?? null,
      need.micros.toString(),
      need.tokens.toString(),
    ],
  });
}

/**
 * The common case in one statement: when no budget, credits or rate limit applies and the run has
 * no cost cap, the attempt's hold is opened at the price in force (earlier attempts' holds
 * released). False, nothing was written: the locked path decides. Its cost is `costOf` in SQL.
 */
async function holdUnlimited(db: Queryable, request: ReservationRequest): Promise<boolean> {
  const capped = (request.maxCostMicros ?? null) !== null;
  const { rows } = await db.query<{ limited: boolean }>({
    name: 'billing.hold_unlimited',
    text: `WITH p AS (
             SELECT * FROM prices WHERE organization_id = $1 AND model = $5 AND effective_from <= now()
              ORDER BY effective_from DESC, created_at DESC, id DESC LIMIT 1
           ), probe AS (
             SELECT ${ANY_LIMIT_SQL} OR $11::boolean AS limited
           ), earlier AS (
             UPDATE usage_holds SET released_at = now()
              WHERE execution_id = $6::uuid AND call_key = $7 AND attempt < $8::int AND released_at IS NULL AND NOT (SELECT limited FROM probe)
           ), hold AS (
             INSERT INTO usage_holds (id, organization_id, execution_id, call_key, attempt, estimated_input_tokens,
                                      scope_kind, scope_id, bot_id, price_id, reserved_micros, reserved_tokens)
             SELECT $9::uuid, $1, $6, $7, $8::int, $10::int, $2, $3, $4, p.id, coalesce(${COST_SQL('$10::int', 'NULL::int', '$12::int')}, 0), ($10::int + $12::int)::bigint
               FROM (SELECT 1) one LEFT JOIN p ON true
              WHERE NOT (SELECT limited FROM probe)
             ON CONFLICT (execution_id, call_key, attempt) DO NOTHING
           )
           SELECT limited FROM probe`,
    values: [
      request.organizationId,
      request.scopeKind,
      request.scopeId,
      request.botId,
      request.model,
      request.executionId,
      request.callKey,
      request.attempt,
      newId(),
      request.estimatedInputTokens,
      capped,
      request.maxTokens,
    ],
  });
  return !rows[0]!.limited;
}

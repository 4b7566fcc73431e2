import type { BudgetStanding, CreditStanding } from './budget-usage';
import { costOf, type Price } from './prices';

/**
 * How many output tokens a model call may ask for, given what every limit on it still affords
 * (decision 081). A reservation holds the input estimate plus `max_tokens`; rather than refusing
 * a call whose whole per-call cap does not fit, it lowers `max_tokens` to the most that the
 * tightest limit affords after the input estimate: each budget (tokens or money), the credits and
 * the run's cost caps. Below the floor the call is refused, as before. All in integers: a money
 * limit affords `n` output tokens when `costOf(price, input, n)` is within it, so the settled cost
 * of a call never passes what was reserved for it.
 */

/** What refuses a call that no longer fits: the run's own cost cap, or a budget (null: the credits). */
export type FitRefusal = { readonly maxCost: true } | { readonly budgetId: string | null };

export type OutputFit = { readonly maxTokens: number } | { readonly refused: FitRefusal };

export interface FitRequest {
  readonly price: Price | null;
  readonly estimatedInputTokens: number;
  /** The most the call asks for: the per-call cap within the run's remaining output limit. */
  readonly maxTokens: number;
  /** The fewest worth sending (at most `maxTokens`): a limit that affords fewer refuses the call. */
  readonly minTokens: number;
}

/** What is left under the limits that apply, read after their locks; `capRoom` null: the run has no cost cap. */
export interface LimitRoom {
  readonly capRoomMicros: bigint | null;
  readonly budgets: readonly BudgetStanding[];
  readonly credits: CreditStanding | null;
}

/**
 * The `max_tokens` the call sends, or the first limit (in the order a reservation checks them:
 * the cost caps, the budgets by ID, the credits) that cannot afford the floor.
 */
export function fitOutput(request: FitRequest, room: LimitRoom): OutputFit {
  const most = BigInt(request.maxTokens);
  const floor = BigInt(Math.min(request.minTokens, request.maxTokens));
  let fit = most;
  const afford = (n: bigint, refusal: FitRefusal): FitRefusal | null => {
    if (n < floor) return refusal;
    if (n < fit) fit = n;
    return null;
  };
  if (room.capRoomMicros !== null) {
    const refused = afford(outputWithinMicros(request, room.capRoomMicros, most), { maxCost: true });
    if (refused !== null) return { refused };
  }
  for (const b of room.budgets) {
    const money = b.limitMicros !== null;
    const left = money ? b.limitMicros! - b.spentMicros - b.reservedMicros : b.limitTokens! - b.spentTokens - b.reservedTokens;
    // A budget with nothing left refuses even a call that would cost nothing (as admission does).
    const n = left <= 0n ? -1n : money ? outputWithinMicros(request, left, most) : left - BigInt(request.estimatedInputTokens);
    const refused = afford(n, { budgetId: b.id });
    if (refused !== null) return { refused };
  }
  if (room.credits !== null) {
    const left = room.credits.balanceMicros - room.credits.reservedMicros;
    const refused = afford(left <= 0n ? -1n : outputWithinMicros(request, left, most), { budgetId: null });
    if (refused !== null) return { refused };
  }
  return { maxTokens: Number(fit) };
}

/**
 * The most output tokens (up to `most`) whose cost with the input estimate is within `left`
 * micros; -1 when not even the input fits. cost = ceil((input × in + n × out) / 1,000,000) ≤ left
 * exactly when input × in + n × out ≤ left × 1,000,000 (integers), so n = floor of the rest / out.
 */
export function outputWithinMicros(request: Pick<FitRequest, 'price' | 'estimatedInputTokens'>, left: bigint, most: bigint): bigint {
  const { price } = request;
  const inputCost = costOf(price, { inputTokens: request.estimatedInputTokens, outputTokens: 0 });
  if (inputCost > left) return -1n;
  if (price === null || price.outputPerMillionMicros === 0n) return most;
  const rest = left * 1_000_000n - BigInt(request.estimatedInputTokens) * price.inputPerMillionMicros;
  const n = rest / price.outputPerMillionMicros;
  return n < most ? n : most;
}

import { RateLimited } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import { checkAdmission } from '../../../../platform/src/billing/admission';
import type { DefaultPrice } from '../../../../platform/src/config/config';
import type { TurnAdmissionLimits } from '../../../../platform/src/turn-core/chat-inputs';
import { limitMessage, lockLimit } from '../../../../platform/src/limits/organization-limits';
import { runningTurnsOf } from '../../../../platform/src/limits/running-turns';

/** What a refused input is told to wait: Turns end as they end, not at a known time. */
const TURN_RETRY_AFTER_SECONDS = 5;

export type { TurnAdmissionLimits } from '../../../../platform/src/turn-core/chat-inputs';

/**
 * Refuses (429 RateLimited naming the limit) an input that would start or queue a Turn past the
 * organization's limits (decision 076): `queuedTurnsPerChat` when it would queue behind the
 * Chat's advancing Turn, counted under the Chat's row lock the caller holds; `runningTurns` when
 * it would start one, counted under the limit's own lock, so racing messages of other Chats
 * never start more than the limit. Both free by themselves as Turns end: a retry succeeds then.
 */
export async function checkTurnAdmission(tx: Queryable, organizationId: string, chatId: string, held: boolean, limits: TurnAdmissionLimits): Promise<void> {
  if (held) {
    const { rows } = await tx.query<{ queued: number }>({
      name: 'chats.count_queued_turns',
      text: `SELECT count(*)::int AS queued FROM chat_turns WHERE chat_id = $1 AND state = 'queued'`,
      values: [chatId],
    });
    if (rows[0]!.queued >= limits.queuedTurnsPerChat) {
      throw new RateLimited(TURN_RETRY_AFTER_SECONDS, limitMessage('queuedTurnsPerChat', limits.queuedTurnsPerChat), 'queuedTurnsPerChat');
    }
    return;
  }
  await lockLimit(tx, organizationId, 'runningTurns');
  const running = await runningTurnsOf(tx, organizationId);
  if (running >= limits.runningTurns) {
    throw new RateLimited(TURN_RETRY_AFTER_SECONDS, limitMessage('runningTurns', limits.runningTurns), 'runningTurns');
  }
}

/** Who an input is admitted for: the organization, the scope billed, and the Bot that answers it. */
export interface InputRules {
  readonly organizationId: string;
  readonly scope: { readonly kind: string; readonly id: string };
  readonly botId: string;
  /** Whether a budget, rate limit or credit account applies (`anyLimitSql`, read by the caller). */
  readonly limited: boolean;
  readonly defaultPrice: DefaultPrice | null;
}

/**
 * What every input to a Bot passes before it starts, queues or steers a Turn, whichever way it
 * comes (IDN-05): an HTTP message, a reminder's post, a delegate tool's task. Something left on
 * the budgets and credits (402 BudgetExceeded), a request left on the rate limits (429) and, under
 * credits, a platform price for the Bot's model (402 ModelNotPriced). A new Turn then passes `checkTurnAdmission`.
 */
export async function checkInputAffordable(tx: Queryable, rules: InputRules): Promise<void> {
  // Nothing left on a budget or the credits (402, PLAT-08), no request left on a rate limit (429), or
  // under credits no platform price for the Bot's model (402, decision 072): one statement (decision 081).
  await checkAdmission(tx, { organizationId: rules.organizationId, scopeKind: rules.scope.kind, scopeId: rules.scope.id, botId: rules.botId }, rules.limited, rules.defaultPrice);
}

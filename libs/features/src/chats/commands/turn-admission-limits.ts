import { RateLimited } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
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

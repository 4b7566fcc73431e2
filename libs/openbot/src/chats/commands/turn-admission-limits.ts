import { RateLimited } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import type { OrganizationLimits } from '../../config/config';
import { limitMessage, lockLimit } from '../../limits/organization-limits';

/** What a refused input is told to wait: Turns end as they end, not at a known time. */
const TURN_RETRY_AFTER_SECONDS = 5;

/** The limits a member's input is admitted under (decision 076). */
export type TurnAdmissionLimits = Pick<OrganizationLimits, 'queuedTurnsPerChat' | 'runningTurns'>;

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

/** The organization's running Turns (tasks' Turns included), through the index of open Turns. */
export async function runningTurnsOf(db: Queryable, organizationId: string): Promise<number> {
  const { rows } = await db.query<{ running: number }>({
    name: 'chats.count_running_turns',
    text: `SELECT count(*)::int AS running FROM chat_turns t JOIN chats c ON c.id = t.chat_id
            WHERE c.organization_id = $1 AND t.state = 'running'`,
    values: [organizationId],
  });
  return rows[0]!.running;
}

import type { Database } from '../../../../platform/src/database/sql';
import type { TurnState } from '../../../../platform/src/turn-core/turn-state';

/** The Chat's row lock, which orders every input (PostMessage takes it first too). */
const LOCK_CHAT = { name: 'turn.steering_lock_chat', text: 'SELECT 1 FROM chats WHERE id = $1 FOR UPDATE' };

/**
 * With `$3` (it may still read), the Turn's unread steering input (as `readNewInputs` reads it)
 * keeps it open; otherwise it closes. Answers whether it found such input.
 */
const CLOSE_STEERING = {
  name: 'turn.close_steering',
  text: `WITH u AS (
           SELECT $3::boolean AND EXISTS (
             SELECT 1 FROM chat_messages WHERE turn_id = $1 AND role = 'user' AND author IS DISTINCT FROM 'task' AND position > $2::bigint
           ) AS unread
         ), c AS (UPDATE chat_turns SET steering_closed = true WHERE id = $1 AND NOT (SELECT unread FROM u))
         SELECT unread FROM u`,
};

/**
 * Whether a Turn that would make no more model calls takes the steering input admitted meanwhile
 * (decision 083). Under the Chat's row lock, so no admission runs between the read and the write:
 * with `readMore` (it may still take a model step) and steering input it has not read, the answer
 * is `unread`: the Turn goes on and its next model step reads it. Otherwise the Turn stops taking
 * steering (`closed`): every later input of its caller queues a Turn of its own, with its own IDs.
 * Both the read and the write are idempotent, so a phase that runs again after a takeover answers
 * the same.
 */
export async function closeSteering(db: Database, state: TurnState, readMore: boolean): Promise<'closed' | 'unread'> {
  return db.transaction(async (tx) => {
    await tx.query({ ...LOCK_CHAT, values: [state.chatId] });
    // A statement of its own after the lock: it sees every admission that committed before it.
    const { rows } = await tx.query<{ unread: boolean }>({ ...CLOSE_STEERING, values: [state.turnId, state.consumed, readMore] });
    return rows[0]!.unread ? 'unread' : 'closed';
  });
}

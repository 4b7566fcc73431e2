import { BudgetExceeded, ModelNotPriced } from '@openbot/domain';
import type { Engine, Json } from '@openbot/engine';
import type { DefaultPrice } from '../../../platform/src/config/config';
import type { Database, TransactionSql } from '../../../platform/src/database/sql';
import type { ChatInputs } from '../../../platform/src/turn-core/chat-inputs';
import { REMINDER } from './reminder-contract';

/**
 * A reminder's delivery (APPR-01, FW-06). The execution waits on the engine's durable timer
 * until the reminder is due — a restart or a takeover keeps the timer, no node holds it in
 * memory — and then closes that one reminder (no scan of due reminders). The post is an outside
 * send recorded in the call log: one transaction locks the reminder row, admits its message into
 * the Chat (author `reminder`, as the Turn's caller's input: it starts, steers or queues a Turn)
 * and marks it `sent`. A retry or a takeover after that commit finds it sent and posts nothing
 * again; a reminder cancelled first is never posted.
 *
 * A post the Chat refuses for a proven reason — nothing left on a budget or the credits of the
 * member it posts as (PLAT-08), or a model under credits the platform has not priced (decision
 * 072) — posted nothing (its transaction rolled back): the reminder stays
 * `pending` and the delivery waits on a durable timer and tries again, 5 s after the first
 * refusal, doubling up to an hour (FW-06: a proven rejection is retried later; any other failure
 * is the call log's, retried as a safe call and then failed). It never posts in another name.
 */
const RETRY_FIRST_MS = 5_000;

/** What a delivery needs from its node; `chats` admits the message (the Chats feature, through the Turn core's port). */
interface ReminderDeps {
  readonly db: Database;
  readonly engine: () => Engine;
  readonly chats: ChatInputs;
  readonly defaultPrice: DefaultPrice | null;
}

const RETRY_MAX_MS = 3_600_000;

/** The Chat refused the post for a proven reason (nothing was posted): not a failed send, retried later. */
class PostRefused extends Error {
  readonly notSent = true;
  readonly safeToRetry = false;
  constructor(cause: BudgetExceeded | ModelNotPriced) {
    super(`the reminder was not posted: ${cause.message}`, { cause });
  }
}

export function reminderWorkflow(deps: ReminderDeps) {
  return REMINDER.implement({
    initial: (input) => ({ ...input, done: false }),
    next: (state) => (state.done ? { end: 'completed' } : { phase: 'deliver' }),
    phases: {
      deliver: {
        async run(context) {
          const state = context.state;
          if (context.clock.now() < state.dueAt) return { state, wait: { until: new Date(state.dueAt) } };
          const identity = await deps.engine().identity(context.executionId);
          try {
            await context.call('post', { safe: true, kind: 'channel' }, () => post(deps, state, identity));
          } catch (error) {
            if (!((error as { cause?: unknown }).cause instanceof PostRefused)) throw error;
            const refusals = (state.refusals ?? 0) + 1;
            const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.min(refusals - 1, 20));
            return { state: { ...state, refusals }, wait: { until: new Date(context.clock.now() + delay) } };
          }
          return { state: { ...state, done: true, refusals: 0 } };
        },
      },
    },
  });
}

async function post(
  deps: ReminderDeps,
  state: { readonly reminderId: string; readonly organizationId: string; readonly chatId: string; readonly scope: { readonly kind: 'member' | 'service'; readonly id: string } },
  identity: Json | null,
): Promise<Json> {
  return deps.db.transaction(async (tx): Promise<Json> => {
    try {
      return await postIn(tx);
    } catch (error) {
      // Rolled back with the transaction: nothing was posted, the reminder is still pending.
      throw error instanceof BudgetExceeded || error instanceof ModelNotPriced ? new PostRefused(error) : error;
    }
  });

  async function postIn(tx: TransactionSql): Promise<Json> {
    const { rows } = await tx.query<{ state: string; message: string }>({
      name: 'reminders.lock',
      text: 'SELECT state, message FROM reminders WHERE id = $1 FOR UPDATE',
      values: [state.reminderId],
    });
    const reminder = rows[0];
    // Cancelled, sent by an earlier attempt, or gone with its Chat: nothing to post.
    if (reminder === undefined || reminder.state !== 'pending') return { posted: false, state: reminder?.state ?? 'gone' };
    const admitted = await deps.chats.admit(tx, {
      chatId: state.chatId,
      organizationId: state.organizationId,
      scope: state.scope,
      identity: () => identity,
      content: reminder.message,
      author: 'reminder',
      commandKey: null,
      defaultPrice: deps.defaultPrice,
    });
    await tx.query({ name: 'reminders.sent', text: `UPDATE reminders SET state = 'sent', sent_at = now() WHERE id = $1`, values: [state.reminderId] });
    return { posted: true, state: 'sent', messageId: admitted.messageId, turnId: admitted.turnId };
  }
}

import { codec, defineWorkflow, type Codec } from '@openbot/engine';
import type { Sql } from '../../../../platform/src/database/sql';

interface ChatDeleteState {
  readonly chatId: string;
  readonly released: boolean;
}

export const CHAT_DELETE = defineWorkflow({
  name: 'chat.delete',
  // Member work: a service scope cannot enter it (IDN-11).
  audience: 'member',
  input: codec.object({ chatId: codec.string }),
  state: codec.object({ chatId: codec.string, released: codec.boolean }) satisfies Codec<ChatDeleteState>,
});

export const CHAT_DELETE_WORKFLOW = CHAT_DELETE.name;

/**
 * Deleting a Chat (RES-04): admission closed when the command was accepted; this execution
 * cancels every Turn that has not ended, in the transaction of its own checkpoint (STC-01; each
 * Turn closes its gate and releases its resources, its background tools with it), waits for the
 * end of all of them (each Turn's end transaction wakes it: no polling), and deletes the Chat's
 * rows in its end transaction. A takeover repeats the cancels (they are idempotent).
 */
export function chatDeleteWorkflow(deps: { readonly db: Sql }) {
  return CHAT_DELETE.implement({
    initial: (input) => ({ chatId: input.chatId, released: false }),
    next: (state) => (state.released ? { end: 'completed' } : { phase: 'release' }),
    phases: {
      release: {
        async run(context) {
          const state = context.state;
          const rows = await deps.db.rows<{ execution_id: string }>({
            name: 'chats.unreleased_turns',
            text: `SELECT execution_id FROM chat_turns WHERE chat_id = $1 AND state <> 'ended' ORDER BY state = 'running', seq DESC`,
            values: [state.chatId],
          });
          if (rows.length === 0) return { state: { ...state, released: true } };
          const turns = rows.map((row) => row.execution_id);
          for (const turn of turns) context.commands.cancel(turn);
          return { state: { ...state }, wait: { executions: turns } };
        },
      },
    },
    async end(context) {
      if (context.outcome !== 'completed') return;
      await context.tx.query('DELETE FROM chats WHERE id = $1', [context.state.chatId]);
    },
  });
}

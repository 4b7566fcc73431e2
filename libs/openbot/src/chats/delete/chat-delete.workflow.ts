import type { Engine, Json, Workflow } from '@openbot/engine';
import type { Pool } from 'pg';

export const CHAT_DELETE_WORKFLOW = 'chat.delete';

/** How often a delete looks again whether every Turn has released. */
const RELEASE_POLL_MS = 250;

interface ChatDeleteState {
  readonly chatId: string;
  readonly released: boolean;
}

/**
 * Deleting a Chat (RES-04): admission closed when the command was accepted; this execution
 * cancels every Turn that has not ended (each closes its gate and releases its resources, its
 * background tools with it), waits on a durable timer until all of them ended, and deletes the
 * Chat's rows in its end transaction. A takeover repeats the cancels (they are idempotent).
 */
export function chatDeleteWorkflow(deps: { readonly pool: Pool; readonly engine: Engine }): Workflow<Json, Json> {
  const open = (state: Json): ChatDeleteState => state as unknown as ChatDeleteState;
  return {
    name: CHAT_DELETE_WORKFLOW,
    initial: (input) => ({ chatId: (input as { chatId: string }).chatId, released: false }),
    next: (state) => (open(state).released ? { end: 'completed' } : { phase: 'release' }),
    phases: {
      release: {
        async run(context) {
          const state = open(context.state);
          const { rows } = await deps.pool.query<{ execution_id: string }>({
            name: 'chats.unreleased_turns',
            text: `SELECT execution_id FROM chat_turns WHERE chat_id = $1 AND state <> 'ended' ORDER BY state = 'running', seq DESC`,
            values: [state.chatId],
          });
          for (const row of rows) await deps.engine.cancel(row.execution_id);
          if (rows.length === 0) return { state: { ...state, released: true } };
          return { state: { ...state }, wait: { until: new Date(context.clock.now() + RELEASE_POLL_MS) } };
        },
      },
    },
    async end(context) {
      if (context.outcome !== 'completed') return;
      await context.tx.query('DELETE FROM chats WHERE id = $1', [open(context.state).chatId]);
    },
  };
}

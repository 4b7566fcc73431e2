import { isUuid, newId } from '@openbot/domain';
import type { WorkflowEndContext } from '@openbot/engine';
import { MEMORY_LEARN } from '../../memory/learning/memory-learn.workflow';
import { TURN } from '../../../../platform/src/turn-core/turn-contract';
import { endedByLimit, type TurnInput, type TurnLimitStop, type TurnMessage, type TurnState } from '../../../../platform/src/turn-core/turn-state';

/**
 * A Turn's end, in the transaction of its final state (STC-01, STC-04): the engine runs it after
 * the Turn's resources closed. Under the Chat's row lock it writes the Turn's assistant and tool
 * messages (so the reply commits before `execution.ended` is published), ends the Turn, and
 * admits the next input: steering input the Turn had no step left to read first, then the oldest
 * queued Turn.
 */
export async function endTurn(context: WorkflowEndContext<TurnState>): Promise<void> {
  const state = context.state;
  const { tx } = context;
  // One statement: whatever way the Turn ended, no call of it runs any more, so its holds go
  // (USE-03); and it leaves no approval to decide (cancelled, failed, or past its limit), so a late yes runs nothing.
  // The Chat's statement below goes out beside it, without waiting (decision 052): the server still runs them in this order.
  const [cancelled, locked] = await Promise.all([
    tx.query(RELEASE_HOLDS, [context.executionId]),
    // One statement: the Chat's row lock first (its init plan runs before the update), then the Turn ends.
    tx.query(LOCK_CHAT_END_TURN, [state.chatId, state.turnId]),
  ]);
  // Every decision is audited: these by the platform, for the Turn that ended.
  for (const row of cancelled.rows as Array<{ id: string; organization_id: string; call_id: string; tool_name: string }>) {
    await tx.query(
      `INSERT INTO audit_events (id, organization_id, actor_kind, actor_id, action, target_type, target_id, details)
       VALUES ($1, $2, 'platform', NULL, 'approval.cancelled', 'approval', $3, $4::jsonb)`,
      [newId(), row.organization_id, row.id, JSON.stringify({ executionId: context.executionId, callId: row.call_id, toolName: row.tool_name, turnOutcome: context.outcome })],
    );
  }
  const chat = locked.rows[0] as { active_turn_id: string | null; closed_at: Date | null; ended: boolean } | undefined;
  if (chat === undefined || !chat.ended || chat.active_turn_id !== state.turnId) return;

  // Steering input the Turn did not read is looked for only when it can carry over: an open Chat, a completed Turn.
  const next = await writeReply(context, state, chat.closed_at === null && context.outcome === 'completed', chat.closed_at === null);
  if ((state.depth ?? 0) > 0) await noticeToParent(context, state);
  await submitLearning(context, state);
  const steering = next?.steering ?? [];
  if (steering.length > 0) {
    const carried = await carryOverSteering(context, state, steering);
    await tx.query('UPDATE chats SET active_turn_id = $2 WHERE id = $1', [state.chatId, carried]);
  } else if (next === null) {
    if (chat.closed_at !== null) await tx.query('UPDATE chats SET active_turn_id = NULL WHERE id = $1', [state.chatId]);
    else await admitQueued(context, state.chatId);
  } else if (next.admitted !== null) {
    await context.admit(next.admitted);
  }
}

/**
 * What the reply's statement decided after the Chat's lock: the unread steering input (oldest
 * first), and the queued Turn it started when there was none (its execution ID), or null.
 */
interface AfterReply {
  readonly steering: string[];
  readonly admitted: string | null;
}

/** Starts the oldest queued Turn of Chat `chat` (when `when` holds); answers its `id` and `execution_id`. */
const startOldestQueued = (chat: string, when = 'true') =>
  `UPDATE chat_turns SET state = 'running'
    WHERE ${when} AND id = (SELECT id FROM chat_turns WHERE chat_id = ${chat} AND state = 'queued' ORDER BY seq LIMIT 1)
    RETURNING id, execution_id`;

/** The user messages of Turn `turn` after position `after` (steering input it left unread), oldest first; `when` gates the read. */
const unreadSteering = (turn: string, after: string, when = 'true') =>
  `SELECT id FROM chat_messages WHERE ${when} AND turn_id = ${turn} AND role = 'user' AND author IS DISTINCT FROM 'task' AND position > ${after}::bigint ORDER BY position`;

// Every Turn's end runs these: prepared once per connection, not parsed and planned each time.
/** A Turn's holds released and its pending approvals cancelled, for execution $1 (one statement). */
const RELEASE_HOLDS = {
  name: 'turns.release_holds',
  text: `WITH holds AS (UPDATE usage_holds SET released_at = now() WHERE execution_id = $1 AND released_at IS NULL)
         UPDATE approvals SET state = 'cancelled', decided_at = now() WHERE execution_id = $1 AND state = 'pending'
         RETURNING id, organization_id, call_id, tool_name`,
};

/** Chat $1's row lock first (its init plan runs before the update), then Turn $2 ends. */
const LOCK_CHAT_END_TURN = {
  name: 'turns.lock_chat_end_turn',
  text: `WITH c AS (SELECT active_turn_id, closed_at FROM chats WHERE id = $1 FOR UPDATE),
              e AS (UPDATE chat_turns SET state = 'ended', ended_at = now() WHERE id = $2 AND state <> 'ended' AND (SELECT count(*) FROM c) >= 0 RETURNING id)
         SELECT c.active_turn_id, c.closed_at, EXISTS (SELECT 1 FROM e) AS ended FROM c`,
};

const UNREAD_STEERING = { name: 'turns.unread_steering', text: unreadSteering('$1', '$2') };

/** writeReply's one statement: positions taken, messages written and the Chat handed on. */
const WRITE_REPLY = {
  name: 'turns.write_reply_stop',
  text: `WITH steer AS (${unreadSteering('$2', '$10', '$11::boolean')}),
     n AS (${startOldestQueued('$1', '$12::boolean AND NOT EXISTS (SELECT 1 FROM steer)')}),
     c AS (
       UPDATE chats SET last_position = last_position + $3,
                        active_turn_id = CASE WHEN EXISTS (SELECT 1 FROM steer) THEN active_turn_id ELSE (SELECT id FROM n) END
        WHERE id = $1 RETURNING last_position
     ),
     reply AS (
       INSERT INTO chat_messages (id, chat_id, turn_id, position, role, content, tool_calls, tool_call_id, file_ids, stop)
       SELECT m.id, $1, $2, c.last_position - $3 + m.ord, m.role, m.content, m.tool_calls, m.tool_call_id, ARRAY(SELECT jsonb_array_elements_text(m.file_ids))::uuid[], m.stop
         FROM c, unnest($4::uuid[], $5::text[], $6::text[], $7::jsonb[], $8::text[], $9::jsonb[], $13::text[]) WITH ORDINALITY AS m(id, role, content, tool_calls, tool_call_id, file_ids, stop, ord)
     )
     SELECT ARRAY(SELECT id FROM steer)::text[] AS steering, (SELECT execution_id FROM n) AS admitted`,
};

/**
 * The assistant and tool messages of the Turn, in order. A tool call whose result never came
 * (the Turn stopped or failed in between) is left out of its assistant message, so the history
 * never shows the model a call without its result. The last one of a Turn a limit stopped is
 * its partial reply, marked with the limit (`stop`).
 *
 * The same statement runs after the Chat's lock, so nothing committed before it is missed. It
 * reads the Turn's unread steering input (with `steering`). When there is none it hands the Chat
 * on: with `admit` it starts the oldest queued Turn, and the Chat's active Turn becomes that one,
 * or none. Null when the Turn wrote no message: then nothing was read or handed on.
 */
async function writeReply(context: WorkflowEndContext<TurnState>, state: TurnState, steering: boolean, admit: boolean): Promise<AfterReply | null> {
  const answered = new Set(state.added.filter((m) => m.role === 'tool').map((m) => m.toolCallId));
  const messages: Array<TurnMessage & { stop?: TurnLimitStop }> = [];
  for (const message of state.added) {
    if (message.role === 'assistant') {
      const toolCalls = (message.toolCalls ?? []).filter((call) => answered.has(call.callId));
      if (message.content === '' && toolCalls.length === 0) continue;
      messages.push(toolCalls.length > 0 ? { role: 'assistant', content: message.content, toolCalls } : { role: 'assistant', content: message.content });
    } else if (message.role === 'tool') {
      messages.push(message);
    }
  }
  // A Turn a limit stopped keeps what it said as a partial reply marked with that limit: its last
  // text, or an empty reply when its last step said nothing but tool calls (decision 084).
  const limit = endedByLimit(state, context.outcome);
  if (limit !== null) {
    const last = messages.at(-1);
    if (last?.role === 'assistant' && last.toolCalls === undefined) messages[messages.length - 1] = { ...last, stop: limit };
    else messages.push({ role: 'assistant', content: '', stop: limit });
  }
  if (messages.length === 0) {
    if (!steering) return null;
    const { rows } = await context.tx.query(UNREAD_STEERING, [state.turnId, state.consumed]);
    const unread = (rows as Array<{ id: string }>).map((row) => row.id);
    return unread.length > 0 ? { steering: unread, admitted: null } : null;
  }
  // The positions are taken, the messages written and the Chat handed on in one statement, under the Chat's row lock endTurn holds.
  const { rows } = await context.tx.query(
    WRITE_REPLY,
    [
      state.chatId,
      state.turnId,
      messages.length,
      messages.map(() => newId()),
      messages.map((m) => m.role),
      messages.map((m) => m.content),
      messages.map((m) => (m.toolCalls ? JSON.stringify(m.toolCalls) : null)),
      messages.map((m) => m.toolCallId ?? null),
      // A tool result's files stay named with it, so later Turns replay them (STC-09); IDs that are no UUID name no file.
      messages.map((m) => JSON.stringify((m.fileIds ?? []).filter(isUuid))),
      state.consumed,
      steering,
      admit,
      messages.map((m) => m.stop ?? null),
    ],
  );
  const row = rows[0] as { steering: string[]; admitted: string | null };
  return { steering: row.steering, admitted: row.admitted };
}

/**
 * A Bot that learns gets a learning execution for every completed Turn, submitted in this end
 * transaction (it runs once the reply has committed); its ID is in `memory.learning`, just
 * before `execution.ended` (decision 030).
 */
async function submitLearning(context: WorkflowEndContext<TurnState>, state: TurnState): Promise<void> {
  const bot = state.bot;
  if (context.outcome !== 'completed' || bot === null || bot.memory?.learn !== true) return;
  const executionId = await context.submit({
    ...MEMORY_LEARN.command({
      organizationId: state.organizationId,
      botId: bot.id,
      chatId: state.chatId,
      turnId: state.turnId,
      model: bot.model,
      scope: state.scope,
      learnAccess: bot.memory.learnAccess ?? 'member',
      read: [...(state.memory?.ids ?? [])],
    }),
    scope: { ...state.scope, organizationId: state.organizationId },
    resource: { type: 'bot', id: bot.id },
  });
  context.emit('memory.learning', { executionId });
}

/**
 * Steering input the Turn took but never read would otherwise go unanswered: it moves to a new
 * Turn of the same identity, admitted at once, ahead of queued input. A Turn stops taking steering
 * once it makes no more model calls (decision 083), so this is input a limit it could not foresee
 * (a budget, its time, the output tokens of its last call) left unread.
 */
async function carryOverSteering(context: WorkflowEndContext<TurnState>, state: TurnState, messageIds: readonly string[]): Promise<string> {
  const turnId = newId();
  const input: TurnInput = { chatId: state.chatId, turnId, organizationId: state.organizationId, scope: state.scope };
  const executionId = await context.submit({
    ...TURN.command(input),
    scope: { ...state.scope, organizationId: state.organizationId },
    resource: { type: 'turn', id: turnId },
  });
  await context.tx.query(
    `INSERT INTO chat_turns (id, chat_id, seq, execution_id, state, scope_kind, scope_id)
     SELECT $1, $2, last_turn_seq + 1, $3, 'running', $4, $5 FROM chats WHERE id = $2`,
    [turnId, state.chatId, executionId, state.scope.kind, state.scope.id],
  );
  await context.tx.query('UPDATE chats SET last_turn_seq = last_turn_seq + 1 WHERE id = $1', [state.chatId]);
  await context.tx.query('UPDATE chat_messages SET turn_id = $2 WHERE id = ANY($1::uuid[])', [[...messageIds], turnId]);
  return turnId;
}

/**
 * The oldest queued Turn starts, and becomes the Chat's active Turn (none when nothing waits), in
 * one statement; its execution's job commits with this end (STC-04).
 */
async function admitQueued(context: WorkflowEndContext<TurnState>, chatId: string): Promise<void> {
  const { rows } = await context.tx.query(
    `WITH n AS (${startOldestQueued('$1')}), c AS (UPDATE chats SET active_turn_id = (SELECT id FROM n) WHERE id = $1)
     SELECT id, execution_id FROM n`,
    [chatId],
  );
  const row = rows[0] as { id: string; execution_id: string } | undefined;
  if (row !== undefined) await context.admit(row.execution_id);
}

/**
 * A detached task's end is a notice to the work that started it (TASK-04). Its parent Turn does
 * not wait for it, and has often ended: the notice adds history to the parent's Chat — a message
 * of author `task`, under the parent Turn, which later Turns read — and starts no Turn, steers
 * none and queues none. Written in this end's transaction, so it is there exactly once. An
 * attached task's end is its call's result instead (the parent waits for it).
 */
async function noticeToParent(context: WorkflowEndContext<TurnState>, state: TurnState): Promise<void> {
  const { tx } = context;
  if (state.attached !== false) return;
  const { rows } = await tx.query(
    `SELECT t.id AS turn_id, t.chat_id FROM chats task
       JOIN chat_turns t ON t.execution_id = task.parent_execution_id
       JOIN chats c ON c.id = t.chat_id
      WHERE task.id = $1 AND c.closed_at IS NULL`,
    [state.chatId],
  );
  const parent = rows[0] as { turn_id: string; chat_id: string } | undefined;
  if (parent === undefined) return;
  const reply = state.added.findLast((m) => m.role === 'assistant' && m.content !== '')?.content ?? '';
  const content = `[Task ${context.executionId} ${context.outcome}]${reply === '' ? '' : ` ${reply}`}`;
  await tx.query(
    `WITH c AS (UPDATE chats SET last_position = last_position + 1 WHERE id = $2 RETURNING last_position)
     INSERT INTO chat_messages (id, chat_id, turn_id, position, role, content, author) SELECT $1, $2, $3, c.last_position, 'user', $4, 'task' FROM c`,
    [newId(), parent.chat_id, parent.turn_id, content],
  );
}

import type { ToolCall } from '@openbot/core';
import type { Queryable } from '@openbot/engine';
import { expandAppTools } from '../../bots/app-tools';
import { DEFAULT_BOT_LIMITS, type BotLimits, type BotTool } from '../../bots/bot-view';
import type { BotMemorySettings } from '../../memory/memory-view';
import type { BotSnapshot, TurnMessage } from '../../../../platform/src/turn-core/turn-state';

/**
 * The Bot of a Chat, as a Turn saves it at its first step. Null when the Chat is gone. App
 * entries are expanded into their saved declarations: the Turn's calls send exactly those.
 */
export async function readBotSnapshot(db: Queryable, chatId: string): Promise<BotSnapshot | null> {
  const { rows } = await db.query<{ id: string; model: string; instructions: string; tools: BotTool[]; limits: BotLimits; memory: BotMemorySettings }>({
    name: 'turn.bot_with_memory',
    text: `SELECT b.id, b.model, b.instructions, b.tools, b.limits, b.memory FROM chats c JOIN bots b ON b.id = c.bot_id WHERE c.id = $1`,
    values: [chatId],
  });
  const row = rows[0];
  if (!row) return null;
  return { id: row.id, model: row.model, instructions: row.instructions, tools: expandAppTools(row.tools), limits: { ...DEFAULT_BOT_LIMITS, ...row.limits }, memory: { enabled: row.memory.enabled, learn: row.memory.learn, learnAccess: row.memory.learnAccess ?? 'member' } };
}

/** User input of this Turn the model has not seen yet, oldest first: the first input, then steering (STC-03). A task's notice is history, never input (TASK-04). */
export async function readNewInputs(db: Queryable, turnId: string, after: string): Promise<Array<{ position: string; content: string; fileIds: string[] }>> {
  const { rows } = await db.query<{ position: string; content: string; fileIds: string[] }>({
    name: 'turn.new_input_files',
    text: `SELECT position::text AS position, content, file_ids::text[] AS "fileIds" FROM chat_messages
            WHERE turn_id = $1 AND role = 'user' AND author IS DISTINCT FROM 'task' AND position > $2::bigint ORDER BY position`,
    values: [turnId, after],
  });
  return rows;
}

interface MessageRow {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls: ToolCall[] | null;
  tool_call_id: string | null;
  file_ids: string[];
}

/**
 * The Chat's history before this Turn: the messages of the Turns that ended, in the order they
 * ended (one Turn advances at a time, so every ended Turn ended before this one started).
 */
export async function readHistory(db: Queryable, chatId: string, turnId: string): Promise<TurnMessage[]> {
  const { rows } = await db.query<MessageRow>({
    name: 'turn.history_files',
    text: `SELECT m.role, m.content, m.tool_calls, m.tool_call_id, m.file_ids::text[] AS file_ids
             FROM chat_messages m JOIN chat_turns t ON t.id = m.turn_id
            WHERE m.chat_id = $1 AND t.state = 'ended' AND t.id <> $2
            ORDER BY t.ended_at, t.seq, m.position`,
    values: [chatId, turnId],
  });
  // An empty partial reply (a Turn a limit stopped before it said anything) tells the model nothing.
  return rows.filter((row) => !(row.role === 'assistant' && row.content === '' && (row.tool_calls ?? []).length === 0)).map((row) => {
    // Files are named, not read: their bytes are read at the model call's send (decision 036).
    const files = row.file_ids.length > 0 ? { fileIds: row.file_ids } : {};
    return row.role === 'tool'
      ? { role: 'tool', content: row.content, toolCallId: row.tool_call_id ?? '', ...files }
      : row.tool_calls && row.tool_calls.length > 0
        ? { role: row.role, content: row.content, toolCalls: row.tool_calls }
        : { role: row.role, content: row.content, ...files };
  });
}

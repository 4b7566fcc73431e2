import type { ToolCall } from '@openbot/core';
import type { Sql } from '../../../../platform/src/database/sql';
import type { ToolAnswer } from '../../../../platform/src/turn-core/tool-answer';
import { routeIssues, type TurnTool } from '../../../../platform/src/turn-core/turn-tool';

/**
 * The `client` tool kind (decision 078): the API caller answers the call with
 * `POST /v1/chats/{id}/tool-outputs`; the Turn waits for its signal until the row is answered.
 */
export function clientTool(db: Sql): TurnTool {
  return {
    kind: 'client',
    answers: 'turn',
    needsChild: false,
    validate: (tool, index) => routeIssues(tool, index, 'a client tool'),
    async answer({ call, state, called }) {
      const saved = await readClientOutput(db, state.turnId, call);
      if (saved === 'new') called();
      return saved === 'new' || saved === 'waiting' ? { waiting: 'signal' } : { answer: saved };
    },
  };
}

/**
 * A client tool call's row: created the first time (the API caller may answer it from then on),
 * answered once the caller posted its output. Rows first: the signal only wakes the Turn.
 */
async function readClientOutput(db: Sql, turnId: string, call: ToolCall): Promise<'new' | 'waiting' | ToolAnswer> {
  const row = (await db.one<{ model_output: string | null; is_error: boolean; file_ids: string[]; answered_at: Date | null; inserted: boolean }>({
    name: 'turn.client_tool_call_files',
    text: `WITH ins AS (
             INSERT INTO chat_client_tool_calls (turn_id, call_id, name, arguments) VALUES ($1, $2, $3, $4)
             ON CONFLICT DO NOTHING RETURNING model_output, is_error, file_ids::text[], answered_at, true AS inserted
           )
           SELECT * FROM ins
           UNION ALL
           SELECT model_output, is_error, file_ids::text[], answered_at, false FROM chat_client_tool_calls WHERE turn_id = $1 AND call_id = $2
           LIMIT 1`,
    values: [turnId, call.callId, call.name, call.arguments],
  }))!;
  if (row.inserted) return 'new';
  if (row.answered_at === null) return 'waiting';
  return { modelOutput: row.model_output ?? '', isError: row.is_error, ...(row.file_ids.length > 0 ? { fileIds: row.file_ids } : {}) };
}

import type { ToolCall, ToolResult } from '@openbot/core';
import type { ExecutionId } from '@openbot/domain';
import type { ExecutionView } from '@openbot/engine';
import type { Pool } from 'pg';
import { BACKGROUND_TOOL } from './background-tool.workflow';
import { answer, callHttpTool, toToolAnswer, type HttpToolClient, type ToolAnswer } from './http-tool';
import { hookFacts } from './model-phase';
import { toolKind } from './tool-definition';
import type { TurnHooks } from './turn-hooks';
import { CLIENT_TOOL_SIGNAL, type TurnPhase, type TurnPhaseContext } from './turn-contract';
import { turnDeadline, type TurnState } from './turn-state';

/**
 * Answers the next tool call of the last model step. The handler comes from the tool definition
 * the Turn saved with its Bot snapshot, never from the Bot as it is now (STC-07, STC-11). Each
 * result is saved — in the call log, the client tool row, or the background execution — before
 * `tool.result` is published (STC-06), and lands in the Turn's state at this phase's checkpoint.
 */
export function toolPhase(deps: {
  readonly pool: Pool;
  readonly http: HttpToolClient;
  readonly hooks: TurnHooks;
  /** The safe view of an execution (state, category, error ID): how the Turn reads its failed background tool. */
  readonly readExecution: (id: ExecutionId) => Promise<ExecutionView | null>;
}): TurnPhase {
  return {
    async run(context: TurnPhaseContext) {
      const state = context.state;
      const call = state.pending[state.results.length]!;
      const tool = state.bot!.tools.find((t) => t.name === call.name);
      const step = state.step;
      const publisher = context.publisher;
      const called = (): void => publisher.publish('tool.called', { callId: call.callId, name: call.name, arguments: call.arguments }, { step });
      let result: ToolAnswer;
      if (tool === undefined) {
        called();
        result = toToolAnswer(answer(`Error: there is no tool named "${call.name}".`, true));
      } else {
        switch (toolKind(tool)) {
          case 'http':
            // Announced with its first send only: a saved result, a decided unknown outcome or a retry announce nothing again.
            result = toToolAnswer(
              await context.call(`tool:${call.callId}`, { safe: tool.retry === 'safe', kind: 'tool' }, (request) => {
                if (request.attempt === 1) called();
                return callHttpTool(deps.http, tool, call, request);
              }),
            );
            break;
          case 'client': {
            const saved = await readClientOutput(deps.pool, state.turnId, call);
            if (saved === 'new') called();
            if (saved === 'new' || saved === 'waiting') {
              return { state, wait: { signals: [CLIENT_TOOL_SIGNAL], ...untilDeadline(state) } };
            }
            result = saved;
            break;
          }
          case 'background': {
            if (state.child === null) {
              called();
              const child = context.startChild(BACKGROUND_TOOL, { organizationId: state.organizationId, tool, call }, { resource: { type: 'tool-call', id: call.callId } });
              return { state: { ...state, child }, wait: { children: true, ...untilDeadline(state) } };
            }
            const output = await context.childResult(BACKGROUND_TOOL, state.child as ExecutionId);
            result = output === undefined ? await childFailure(deps.readExecution, state.child as ExecutionId, call.name) : toToolAnswer(output);
            break;
          }
        }
      }
      publisher.publish('tool.result', { callId: call.callId, name: call.name, isError: result.isError, ...result.failure }, { step });
      const toolResult: ToolResult = { callId: call.callId, name: call.name, modelOutput: result.modelOutput, isError: result.isError };
      await deps.hooks.run('tool.result', { ...hookFacts(state, context.executionId, step), toolResult });
      const next: TurnState = {
        ...state,
        results: [...state.results, toolResult],
        added: [...state.added, { role: 'tool', content: toolResult.modelOutput, toolCallId: call.callId }],
        child: null,
      };
      return { state: next };
    },
  };
}

/**
 * What the Turn answers the model when its background tool did not complete. A failed child's
 * category and error ID are reused as they are (ERR-01): the parent never mints an ID of its own
 * for the same failure, and the cause stays in the child's sealed error record. A phase run again
 * after a takeover reads the same row, so it answers the same ID.
 */
async function childFailure(read: (id: ExecutionId) => Promise<ExecutionView | null>, childId: ExecutionId, name: string): Promise<ToolAnswer> {
  const child = await read(childId);
  if (child?.state === 'failed' && child.errorId !== null) {
    const failure = { category: child.category ?? 'internal', errorId: child.errorId };
    return { modelOutput: `Error: the background tool "${name}" failed (category ${failure.category}, error ID ${failure.errorId}).`, isError: true, failure };
  }
  return { modelOutput: `Error: the background tool "${name}" did not complete.`, isError: true };
}

function untilDeadline(state: TurnState): { until?: Date } {
  const deadline = turnDeadline(state);
  return deadline === null ? {} : { until: deadline };
}

/**
 * A client tool call's row: created the first time (the API caller may answer it from then on),
 * answered once the caller posted its output. Rows first: the signal only wakes the Turn.
 */
async function readClientOutput(pool: Pool, turnId: string, call: ToolCall): Promise<'new' | 'waiting' | ToolAnswer> {
  const { rows } = await pool.query<{ model_output: string | null; is_error: boolean; answered_at: Date | null; inserted: boolean }>({
    name: 'turn.client_tool_call',
    text: `WITH ins AS (
             INSERT INTO chat_client_tool_calls (turn_id, call_id, name, arguments) VALUES ($1, $2, $3, $4)
             ON CONFLICT DO NOTHING RETURNING model_output, is_error, answered_at, true AS inserted
           )
           SELECT * FROM ins
           UNION ALL
           SELECT model_output, is_error, answered_at, false FROM chat_client_tool_calls WHERE turn_id = $1 AND call_id = $2
           LIMIT 1`,
    values: [turnId, call.callId, call.name, call.arguments],
  });
  const row = rows[0]!;
  if (row.inserted) return 'new';
  if (row.answered_at === null) return 'waiting';
  return { modelOutput: row.model_output ?? '', isError: row.is_error };
}

import type { ToolCall } from '@openbot/core';
import type { Json, Workflow } from '@openbot/engine';
import type { BotTool } from '../../bots/bot-view';
import { callHttpTool, type HttpToolClient } from './http-tool';

export const BACKGROUND_TOOL_WORKFLOW = 'chat.background-tool';

export interface BackgroundToolInput {
  readonly organizationId: string;
  readonly tool: BotTool;
  readonly call: ToolCall;
}

interface BackgroundToolState {
  readonly input: BackgroundToolInput;
  readonly answer: Json | null;
}

/**
 * A background tool (FW-01, EXE-13): its HTTP call runs as an execution of its own, a child of
 * the Turn, through the call log like any outside call. Its end notifies the Turn, which reads
 * the saved answer; cancelling the Turn cancels it.
 */
export function backgroundToolWorkflow(deps: { readonly http: HttpToolClient }): Workflow<Json, Json> {
  const open = (state: Json): BackgroundToolState => state as unknown as BackgroundToolState;
  return {
    name: BACKGROUND_TOOL_WORKFLOW,
    // Started only by a Turn, with the Turn's scope and identity (IDN-02, IDN-11).
    audience: 'member',
    initial: (input) => ({ input, answer: null }) as unknown as Json,
    next: (state) => {
      const s = open(state);
      return s.answer === null ? { phase: 'call' } : { end: 'completed', result: s.answer };
    },
    phases: {
      call: {
        async run(context) {
          const s = open(context.state);
          const { tool, call } = s.input;
          const answer = await context.calls.call('http', { safe: tool.retry === 'safe', kind: 'tool' }, (request) => callHttpTool(deps.http, tool, call, request));
          return { state: { ...s, answer } as unknown as Json };
        },
      },
    },
  };
}

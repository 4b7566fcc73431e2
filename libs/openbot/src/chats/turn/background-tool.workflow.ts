import type { ToolCall } from '@openbot/core';
import { codec, defineWorkflow, type Codec, type Json } from '@openbot/engine';
import type { BotTool } from '../../bots/bot-view';
import { callHttpTool, type HttpToolClient } from './http-tool';
import { toolCallCodec } from '../../models/model-step-codec';
import { botToolCodec } from './turn-contract';

export interface BackgroundToolInput {
  readonly organizationId: string;
  /** The Turn's member: header references are checked against it at the send (absent in older inputs). */
  readonly actor?: { readonly kind: 'member' | 'service'; readonly id: string };
  readonly tool: BotTool;
  readonly call: ToolCall;
}

interface BackgroundToolState {
  readonly input: BackgroundToolInput;
  readonly answer: Json | null;
}

const inputCodec: Codec<BackgroundToolInput> = codec.object({
  organizationId: codec.string,
  actor: codec.optional(codec.object({ kind: codec.oneOf(['member', 'service']), id: codec.string })),
  tool: botToolCodec,
  call: toolCallCodec,
});

/** A background tool: started by a Turn with its input, completed with the endpoint's answer. */
export const BACKGROUND_TOOL = defineWorkflow({
  name: 'chat.background-tool',
  // Started only by a Turn, with the Turn's scope and identity (IDN-02, IDN-11).
  audience: 'member',
  input: inputCodec,
  state: codec.object({ input: inputCodec, answer: codec.nullable(codec.json) }) satisfies Codec<BackgroundToolState>,
  result: codec.json,
  calls: { http: codec.json },
});

export const BACKGROUND_TOOL_WORKFLOW = BACKGROUND_TOOL.name;

/**
 * A background tool (FW-01, EXE-13): its HTTP call runs as an execution of its own, a child of
 * the Turn, through the call log like any outside call. Its end notifies the Turn, which reads
 * the saved answer; cancelling the Turn cancels it.
 */
export function backgroundToolWorkflow(deps: { readonly http: HttpToolClient }) {
  return BACKGROUND_TOOL.implement({
    initial: (input) => ({ input, answer: null }),
    next: (state) => (state.answer === null ? { phase: 'call' } : { end: 'completed', result: state.answer }),
    phases: {
      call: {
        async run(context) {
          const { tool, call, organizationId, actor } = context.state.input;
          const work = { organizationId, executionId: context.executionId, ...(actor ? { actor } : {}) };
          const answer = await context.call('http', { safe: tool.retry === 'safe', kind: 'tool' }, (request) => callHttpTool(deps.http, tool, call, request, work));
          return { state: { ...context.state, answer } };
        },
      },
    },
  });
}

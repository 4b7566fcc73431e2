import type { ToolCall } from '@openbot/core';
import { isFinal, type ExecutionId } from '@openbot/domain';
import { codec, defineWorkflow, type Codec, type ExecutionView, type Json } from '@openbot/engine';
import type { BotTool } from '../bot-view';
import { toToolAnswer, type ToolAnswer } from '../../../../platform/src/turn-core/tool-answer';
import { PhaseScope, type TurnTool } from '../../../../platform/src/turn-core/turn-tool';
import type { ToolCalls } from '../../../../platform/src/tool-calls/tool-calls';
import { endpointIssues } from './http-tool';
import { toolCallCodec } from '../../../../platform/src/models/model-step-codec';
import { botToolCodec } from '../../../../platform/src/turn-core/turn-contract';

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
 * the Turn, sent by ToolCalls as the `http` kind under the call log like any outside call
 * (decision 078). Its end notifies the Turn, which reads the saved answer; cancelling the Turn
 * cancels it.
 */
export function backgroundToolWorkflow(deps: { readonly toolCalls: ToolCalls }) {
  return BACKGROUND_TOOL.implement({
    initial: (input) => ({ input, answer: null }),
    next: (state) => (state.answer === null ? { phase: 'call' } : { end: 'completed', result: state.answer }),
    phases: {
      call: {
        async run(context) {
          const { tool, call, organizationId, actor } = context.state.input;
          const callContext = {
            organizationId,
            executionId: context.executionId,
            ...(actor ? { actor } : {}),
            step: context.step,
            publisher: context.publisher,
            resources: context.resources,
            scope: new PhaseScope(),
            callLog: (_key: string, options: { readonly safe: boolean; readonly kind: 'tool' }, send: Parameters<typeof context.call>[2]) => context.call('http', options, send),
          };
          // Its own call-log entry `http`, as it always had: the endpoint's answer is the execution's result.
          const answer = await deps.toolCalls.send(callContext, { ...tool, kind: 'http' }, call, 'http');
          return { state: { ...context.state, answer } };
        },
      },
    },
  });
}

/**
 * The `background` tool kind (FW-01, decision 078): the first look at a call starts its child
 * execution with the Turn's scope and identity; later looks read the child, and its saved answer
 * once it ended.
 */
export function backgroundTool(readExecution: (id: ExecutionId) => Promise<ExecutionView | null>): TurnTool {
  return {
    kind: 'background',
    answers: 'turn',
    needsChild: true,
    validate: endpointIssues,
    async answer({ tool, call, phase, state, child: started, called }) {
      if (started === undefined) {
        called();
        const child = phase.startChild(BACKGROUND_TOOL, { organizationId: state.organizationId, actor: state.scope, tool, call }, { resource: { type: 'tool-call', id: call.callId } });
        return { waiting: 'child', child };
      }
      const child = await readExecution(started as ExecutionId);
      if (child !== null && !isFinal(child.state)) return { waiting: 'child' };
      const output = await phase.childResult(BACKGROUND_TOOL, started as ExecutionId);
      return { answer: output === undefined ? await childFailure(readExecution, started as ExecutionId, call.name) : toToolAnswer(output) };
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

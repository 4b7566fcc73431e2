import { Inject, Injectable } from '@nestjs/common';
import type { ToolCall, ToolDefinition } from '@openbot/core';
import type { Json } from '@openbot/engine';
import { LimitsUnreadable } from '../billing/limits-unreadable';
import { describeToolCall } from '../tracing/tool-call-span';
import { ApprovalGates, refusalOutput } from '../turn-core/approval-gate';
import { answer, toToolAnswer, type ToolAnswer } from '../turn-core/tool-answer';
import { toolDefinition, toolKind } from '../turn-core/tool-definition';
import type { BotTool } from '../turn-core/tool-spec';
import type { TurnPhaseContext } from '../turn-core/turn-contract';
import type { GatedCall, TurnPlan, TurnState, TurnToolResult } from '../turn-core/turn-state';
import { TurnTools, type OutsideToolKind, type ToolCallContext, type TurnTool } from '../turn-core/turn-tool';

/** A Turn's tool call: the call context, the Turn's saved declarations and what its phase holds. */
export interface TurnCallContext extends ToolCallContext {
  /** The tools the Turn saved with its Bot snapshot: a call is answered from these, never from the Bot as it is now (STC-07, STC-11). */
  readonly declarations: readonly BotTool[];
  /** The calls of this step waiting for a decision, with their approval records (decision 025). */
  readonly gated: readonly GatedCall[];
  /** The calls of this step, in the order the model made them. */
  readonly stepCalls: readonly ToolCall[];
  /** `toolCallsPerStep` (decision 076): the step's calls past this many get an error result naming the limit, unsent. */
  readonly callsPerStep: number;
  readonly phase: TurnPhaseContext;
  readonly state: TurnState;
  /** The child execution a call started in an earlier run of this phase. */
  childOf(callId: string): string | undefined;
}

/** How one call of a Turn stands at the end of this look at it. */
export type ToolCallOutcome =
  | { readonly result: TurnToolResult; readonly child?: string; readonly plan?: TurnPlan }
  | { readonly waiting: 'signal' | 'child'; readonly child?: string }
  /** A check the call needs could not be made (DLG-01): the call neither runs nor is refused. */
  | { readonly stopped: unknown };

/**
 * The one way a workflow answers a tool call (decision 078, beside ModelCalls). A call is
 * answered from its saved declaration by the tool kind that owns it (registered with TurnTools
 * by its feature); a gated call only once its approval says yes (through the approval-gate hook);
 * an outside send only under the call's own call-log entry, so a saved result is reused after a
 * takeover and never asked for again (EXE-10). Each result is saved — in the call log, the
 * client tool row, or the child execution — before `tool.result` is published (STC-06). The kind
 * checks what must hold at the send: the identity's current rights, Vault references, an App
 * connection's revision and member boundary.
 */
@Injectable()
export class ToolCalls {
  constructor(
    @Inject(TurnTools) private readonly tools: TurnTools,
    @Inject(ApprovalGates) private readonly approvals: ApprovalGates,
  ) {}

  /** What the model is told of each tool: its kind's definition, by default name, description and parameters, never its route. */
  definitions(tools: readonly BotTool[]): ToolDefinition[] {
    // A kind no feature of this node registers is described by its saved declaration; its calls are answered with an error (decision 080).
    return tools.map((tool) => this.tools.find(toolKind(tool))?.definition?.(tool) ?? toolDefinition(tool));
  }

  /**
   * One outside call under the call-log entry `key`, announcing nothing (an App View's call,
   * FW-05): the kind checks and sends it once per attempt, repeated only when it is safe.
   */
  send(context: ToolCallContext, tool: BotTool, call: ToolCall, key: string): Promise<Json> {
    const kind = this.outside(this.tools.of(toolKind(tool)));
    return context.callLog(key, { safe: kind.repeatSafe(tool), kind: 'tool' }, (request) => kind.send(tool, call, request, context));
  }

  /**
   * One call of a Turn, from its gate to its saved answer (and `tool.result`), or what it waits
   * for. `tool.called` goes out once, when the call counts as made: a reused result announces
   * nothing again.
   */
  async answer(turn: TurnCallContext, call: ToolCall): Promise<ToolCallOutcome> {
    try {
      const outcome = await this.look(turn, call);
      if ('stopped' in outcome || 'waiting' in outcome) return outcome;
      const result = outcome.answer;
      turn.publisher.publish('tool.result', { callId: call.callId, name: call.name, isError: result.isError, ...result.failure, ...appFacts(declared(turn, call)) }, { step: turn.step });
      const files = result.fileIds !== undefined && result.fileIds.length > 0 ? { fileIds: [...result.fileIds] } : {};
      const saved: TurnToolResult = { callId: call.callId, name: call.name, modelOutput: result.modelOutput, isError: result.isError, ...files };
      return { result: saved, ...(outcome.child === undefined ? {} : { child: outcome.child }), ...(outcome.plan === undefined ? {} : { plan: outcome.plan }) };
    } catch (error) {
      // A limit check that could not read (DLG-01): the call neither runs nor fails; the Turn is left paused.
      if (error instanceof LimitsUnreadable) return { stopped: error };
      throw error;
    }
  }

  private async look(turn: TurnCallContext, call: ToolCall): Promise<{ readonly answer: ToolAnswer; readonly child?: string; readonly plan?: TurnPlan } | { readonly waiting: 'signal' | 'child'; readonly child?: string } | { readonly stopped: unknown }> {
    // An organization-controlled model cannot make the platform send more than the limit per step.
    if (turn.stepCalls.findIndex((c) => c.callId === call.callId) >= turn.callsPerStep) {
      return { answer: overToolCallLimit(turn.callsPerStep, turn.stepCalls.length) };
    }
    const tool = declared(turn, call);
    const gate = turn.gated.find((g) => g.callId === call.callId);
    let decided = (): void => undefined;
    if (gate !== undefined) {
      let current;
      try {
        current = await this.approvals.read(turn.executionId, gate, turn.phase.clock.now());
      } catch (error) {
        // The approval check could not be made: the call neither runs nor is refused (DLG-01).
        return { stopped: error };
      }
      if (current.state === 'pending') return { waiting: 'signal' };
      if (current.state !== 'approved') {
        // A denied or expired call has no tool.called: the model reads why it did not run.
        const decision = current.state === 'expired' ? 'expire' : 'deny';
        if (current.state !== 'cancelled') turn.publisher.publish('approval.decided', { approvalId: gate.approvalId, decision }, { step: turn.step });
        return { answer: { modelOutput: refusalOutput(call.name, current), isError: true } };
      }
      // Announced with the approved call's first send, so a reused result announces nothing again.
      decided = () => turn.publisher.publish('approval.decided', { approvalId: gate.approvalId, decision: 'approve' }, { step: turn.step });
    }
    const called = (): void => {
      decided();
      turn.publisher.publish('tool.called', { callId: call.callId, name: call.name, arguments: call.arguments, ...appFacts(tool) }, { step: turn.step });
    };
    if (tool === undefined) {
      called();
      return { answer: toToolAnswer(answer(`Error: there is no tool named "${call.name}".`, true)) };
    }
    const kind = this.tools.find(toolKind(tool));
    if (kind === undefined) {
      // Saved while its feature was on the node, answered where it is not (decision 080): the call fails, naming the kind; the Turn goes on.
      called();
      return { answer: toToolAnswer(answer(`Error: the tool "${call.name}" is of kind "${toolKind(tool)}", which no feature of this node provides.`, true)) };
    }
    // Only a kind that runs calls as child executions is handed the child a call started earlier.
    if (kind.answers === 'turn') return kind.answer({ tool, call, context: turn, phase: turn.phase, state: turn.state, child: kind.needsChild ? turn.childOf(call.callId) : undefined, called });
    // The saved declaration and arguments, sent once per attempt under the call's own key (STC-07, STC-12).
    const saved = await turn.callLog(`tool:${call.callId}`, { safe: kind.repeatSafe(tool), kind: 'tool' }, (request) => {
      if (request.attempt === 1) called();
      describeToolCall(request.span, { name: call.name, callId: call.callId, servedBy: kind.servedBy });
      return kind.send(tool, call, request, turn);
    });
    return { answer: toToolAnswer(saved) };
  }

  private outside(kind: TurnTool): OutsideToolKind {
    if (kind.answers !== 'send') throw new Error(`the tool kind "${kind.kind}" is answered only inside a Turn`);
    return kind;
  }
}

function declared(turn: TurnCallContext, call: ToolCall): BotTool | undefined {
  return turn.declarations.find((t) => t.name === call.name);
}

/** App calls name their connection and its saved revision on their events. */
function appFacts(tool: BotTool | undefined): Record<string, Json> {
  return tool?.declaration === undefined ? {} : { app: { connectionId: tool.declaration.connectionId, revision: tool.declaration.revision } };
}

/**
 * The answer to a call past `toolCallsPerStep` (decision 076): not run, not announced as called;
 * the model reads which limit held it back, and the step proceeds with the calls that ran.
 */
function overToolCallLimit(limit: number, asked: number): ToolAnswer {
  return {
    modelOutput: `Error: this tool call was not run: the organization's limit toolCallsPerStep allows ${limit} tool calls in one model step, and this step asked for ${asked}. Ask for fewer calls at once.`,
    isError: true,
  };
}

import type { ToolCall } from '@openbot/core';
import type { Database } from '../../../../platform/src/database/sql';
import { hookFacts } from './model-phase';
import type { TurnHooks } from './turn-hooks';
import { nextExpiry } from '../../../../platform/src/turn-core/approval-gate';
import { APPROVAL_SIGNAL, CLIENT_TOOL_SIGNAL, type TurnPhase, type TurnPhaseContext } from '../../../../platform/src/turn-core/turn-contract';
import { PhaseScope } from '../../../../platform/src/turn-core/turn-tool';
import { pastTimeLimit, startCounting } from './turn-clock';
import { pausedForRecovery } from './recovery-pause';
import { LimitsUnreadable } from '../../../../platform/src/billing/limits-unreadable';
import { stopCounting, turnDeadline, type TurnMessage, type TurnState, type TurnToolResult } from '../../../../platform/src/turn-core/turn-state';
import type { ToolCalls, TurnCallContext } from '../../../../platform/src/tool-calls/tool-calls';

/**
 * Answers the tool calls of the last model step, concurrently, each through ToolCalls (decision
 * 078): under its own call-log entry (`tool:<callId>`), so a result saved once is reused after a
 * takeover and never asked for again (EXE-10), from the tool definition the Turn saved with its
 * Bot snapshot, never from the Bot as it is now (STC-07, STC-11). Each result is saved — in the
 * call log, the client tool row, or the background execution — before `tool.result` is published
 * (STC-06), and lands in the Turn's state at this phase's checkpoint.
 *
 * A call that needs approval waits for its decision while the other calls run (FW-02). A decision
 * that arrives while calls are still running reaches this phase through its inbox at once and the
 * approved call starts; otherwise the Turn waits for the decision signal, a client output, its
 * background tools, the earliest approval expiry or its deadline, whichever comes first.
 */
export function toolPhase(deps: {
  readonly db: Database;
  /** How every tool call is answered (decision 078). */
  readonly toolCalls: ToolCalls;
  readonly hooks: TurnHooks;
  /** `toolCallsPerStep` (decision 076): the step's calls past this many get an error result naming the limit, unsent. */
  readonly toolCallsPerStep: number;
}): TurnPhase {
  return {
    async run(context: TurnPhaseContext) {
      const state = await startCounting(deps.db, context, context.state);
      if (pastTimeLimit(state, context.clock.now())) return { state: { ...state, timedOut: true } };
      const step = state.step;
      const results = [...state.results];
      const children = legacyChildren(state);
      const gated = state.gated ?? [];
      const waiting = new Set<string>();
      let waitChildren = false;
      let plan = state.plan;
      const failures: unknown[] = [];
      /** Approval or limit checks that failed (a read error): the Turn is left paused for recovery. */
      const checkStopped: unknown[] = [];
      const turn: TurnCallContext = {
        organizationId: state.organizationId,
        actor: state.scope,
        executionId: context.executionId,
        step,
        publisher: context.publisher,
        resources: context.resources,
        // The MCP sessions this run's App calls share, released with the phase's resources (RES-01).
        scope: new PhaseScope(),
        callLog: (key, options, send) => context.call(key as `tool:${string}`, options, send),
        declarations: state.bot!.tools,
        gated,
        stepCalls: state.pending,
        callsPerStep: deps.toolCallsPerStep,
        phase: context,
        state,
        childOf: (callId) => children.find((c) => c.callId === callId)?.childId,
      };

      const settle = async (call: ToolCall): Promise<void> => {
        try {
          const outcome = await deps.toolCalls.answer(turn, call);
          if ('child' in outcome && outcome.child !== undefined) children.push({ callId: call.callId, childId: outcome.child });
          if ('stopped' in outcome) {
            checkStopped.push(outcome.stopped);
            waiting.add(call.callId);
            return;
          }
          if ('waiting' in outcome) {
            waiting.add(call.callId);
            if (outcome.waiting === 'child') waitChildren = true;
            return;
          }
          if (outcome.plan !== undefined) plan = outcome.plan;
          results.push(outcome.result);
          await deps.hooks.run('tool.result', { ...hookFacts(state, context.executionId, step), toolResult: outcome.result });
        } catch (error) {
          // A limit check that could not read (DLG-01): the call neither runs nor fails; the Turn is left paused.
          if (error instanceof LimitsUnreadable) {
            checkStopped.push(error);
            waiting.add(call.callId);
            return;
          }
          failures.push(error);
        }
      };

      const inflight = new Map<string, Promise<void>>();
      const start = (call: ToolCall): void => {
        const running = settle(call).finally(() => inflight.delete(call.callId));
        inflight.set(call.callId, running);
      };
      const open = (): ToolCall[] =>
        state.pending.filter((c) => !results.some((r) => r.callId === c.callId) && !inflight.has(c.callId) && !waiting.has(c.callId));
      for (const call of open()) start(call);
      while (inflight.size > 0) {
        if (failures.length > 0 || waiting.size === 0) {
          await Promise.race(inflight.values());
          continue;
        }
        // Calls wait while others run: a decision or an output that arrives now is taken at once.
        const done = new AbortController();
        const work = Promise.race(inflight.values()).then(() => done.abort());
        const arrived = await context.inbox.next([APPROVAL_SIGNAL, CLIENT_TOOL_SIGNAL], done.signal).catch(async (error: unknown) => {
          await Promise.allSettled(inflight.values());
          throw error;
        });
        done.abort();
        // Not awaited: waiting for it would hold an arrived decision until a running call ends.
        void work.catch(() => undefined);
        if (arrived.length > 0 && failures.length === 0) {
          const again = state.pending.filter((c) => waiting.has(c.callId) && !children.some((child) => child.callId === c.callId));
          for (const call of again) waiting.delete(call.callId);
          for (const call of again) start(call);
        }
      }
      if (failures.length > 0) throw failures[0];

      let next: TurnState = { ...state, results, added: withToolMessages(state, results), child: null, children, ...(plan === undefined ? {} : { plan }) };
      if (checkStopped.length > 0) {
        const reason = checkStopped.some((e) => e instanceof LimitsUnreadable) ? 'limit-check-failed' : 'approval-check-failed';
        return pausedForRecovery(context, next, reason, [CLIENT_TOOL_SIGNAL, APPROVAL_SIGNAL]);
      }
      if (waiting.size === 0) return { state: next };
      // Waiting only for people's decisions does not count toward the time limit (TASK-03).
      if ([...waiting].every((callId) => gated.some((g) => g.callId === callId))) next = stopCounting(next, context.clock.now());
      const deadline = turnDeadline(next)?.getTime() ?? null;
      const expiry = nextExpiry(gated, waiting);
      const until = [deadline, expiry].filter((t): t is number => t !== null);
      return {
        state: next,
        wait: {
          signals: [CLIENT_TOOL_SIGNAL, APPROVAL_SIGNAL],
          ...(waitChildren ? { children: true } : {}),
          ...(until.length > 0 ? { until: new Date(Math.min(...until)) } : {}),
        },
      };
    },
  };
}

/**
 * The Turn's messages with this step's tool results after its assistant message, in the order of
 * the calls (whatever order they came in), so the model and the Chat read them as asked.
 */
function withToolMessages(state: TurnState, results: readonly TurnToolResult[]): TurnMessage[] {
  const lastAssistant = state.added.findLastIndex((m) => m.role === 'assistant');
  const answered = state.pending.flatMap((call) => {
    const result = results.find((r) => r.callId === call.callId);
    if (result === undefined) return [];
    return [{ role: 'tool' as const, content: result.modelOutput, toolCallId: call.callId, ...(result.fileIds ? { fileIds: result.fileIds } : {}) }];
  });
  return [...state.added.slice(0, lastAssistant + 1), ...answered];
}

/** A Turn saved while calls ran one at a time kept one background child, for the first unanswered call. */
function legacyChildren(state: TurnState): Array<{ callId: string; childId: string }> {
  const children = [...(state.children ?? [])];
  const first = state.pending[state.results.length];
  if (state.child !== null && first !== undefined && !children.some((c) => c.childId === state.child)) children.push({ callId: first.callId, childId: state.child });
  return children;
}

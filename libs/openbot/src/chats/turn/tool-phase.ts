import type { ToolCall } from '@openbot/core';
import { isFinal, type ExecutionId } from '@openbot/domain';
import type { ExecutionView, Json } from '@openbot/engine';
import type { Database, Sql } from '../../database/sql';
import { BACKGROUND_TOOL } from './background-tool.workflow';
import { answer, callHttpTool, toToolAnswer, type HttpToolClient, type ToolAnswer } from './http-tool';
import { callAppTool, type AppToolDeps } from './app-tool';
import { PhaseSessions } from '../../apps/app-sessions';
import { isRepeatSafe } from '@openbot/protocol';
import { hookFacts } from './model-phase';
import { toolKind } from './tool-definition';
import type { TurnHooks } from './turn-hooks';
import { nextExpiry, readGate, refusalOutput } from './approval-gate';
import { startTask, taskAnswer } from './delegate-tool';
import { updatePlan } from './plan-tool';
import { setReminder } from './remind-tool';
import { APPROVAL_SIGNAL, CLIENT_TOOL_SIGNAL, type TurnPhase, type TurnPhaseContext } from './turn-contract';
import { pastTimeLimit, startCounting } from './turn-clock';
import { pausedForRecovery } from './recovery-pause';
import { LimitsUnreadable } from '../../billing/limits-unreadable';
import { stopCounting, turnDeadline, type TurnMessage, type TurnState, type TurnToolResult } from './turn-state';
import { describeToolCall } from '../../tracing/tool-call-span';

/** How one call stands at the end of this phase run. */
type CallOutcome = { readonly answer: ToolAnswer } | 'waiting' | 'waiting-child';

/**
 * Answers the tool calls of the last model step, concurrently: each call runs under its own
 * call-log entry (`tool:<callId>`), so a result saved once is reused after a takeover and never
 * asked for again (EXE-10). The handler comes from the tool definition the Turn saved with its Bot
 * snapshot, never from the Bot as it is now (STC-07, STC-11). Each result is saved — in the call
 * log, the client tool row, or the background execution — before `tool.result` is published
 * (STC-06), and lands in the Turn's state at this phase's checkpoint.
 *
 * A call that needs approval waits for its decision while the other calls run (FW-02). A decision
 * that arrives while calls are still running reaches this phase through its inbox at once and the
 * approved call starts; otherwise the Turn waits for the decision signal, a client output, its
 * background tools, the earliest approval expiry or its deadline, whichever comes first.
 */
export function toolPhase(deps: {
  readonly db: Database;
  readonly http: HttpToolClient;
  /** How App tools reach their servers (decision 031). */
  readonly apps: AppToolDeps;
  readonly hooks: TurnHooks;
  /** The safe view of an execution (state, category, error ID): how the Turn reads its failed background tool. */
  readonly readExecution: (id: ExecutionId) => Promise<ExecutionView | null>;
  /** OPENBOT_MAX_DELEGATION_DEPTH */
  readonly maxDepth: number;
  /** `toolCallsPerStep` (decision 076): the step's calls past this many get an error result naming the limit, unsent. */
  readonly toolCallsPerStep: number;
}): TurnPhase {
  return {
    async run(context: TurnPhaseContext) {
      const state = await startCounting(deps.db, context, context.state);
      if (pastTimeLimit(state, context.clock.now())) return { state: { ...state, timedOut: true } };
      const step = state.step;
      const publisher = context.publisher;
      const results = [...state.results];
      const children = legacyChildren(state);
      const gated = state.gated ?? [];
      const waiting = new Set<string>();
      let waitChildren = false;
      let plan = state.plan;
      const failures: unknown[] = [];
      /** Approval or limit checks that failed (a read error): the Turn is left paused for recovery. */
      const checkStopped: unknown[] = [];
      /** The MCP sessions this run's App calls share, released with the phase's resources (RES-01). */
      const sessions = new PhaseSessions(deps.apps.sessions, context.resources, context.executionId);

      /** One call, from its gate to its saved answer (or what it waits for). */
      const answerCall = async (call: ToolCall): Promise<CallOutcome> => {
        // An organization-controlled model cannot make the platform send more than the limit per step.
        if (state.pending.findIndex((c) => c.callId === call.callId) >= deps.toolCallsPerStep) {
          return { answer: overToolCallLimit(deps.toolCallsPerStep, state.pending.length) };
        }
        const tool = state.bot!.tools.find((t) => t.name === call.name);
        const gate = gated.find((g) => g.callId === call.callId);
        let decided = (): void => undefined;
        if (gate !== undefined) {
          let current;
          try {
            current = await readGate(deps.db, context.executionId, gate, context.clock.now());
          } catch (error) {
            // The approval check could not be made: the call neither runs nor is refused (DLG-01).
            checkStopped.push(error);
            return 'waiting';
          }
          if (current.state === 'pending') return 'waiting';
          if (current.state !== 'approved') {
            // A denied or expired call has no tool.called: the model reads why it did not run.
            const decision = current.state === 'expired' ? 'expire' : 'deny';
            if (current.state !== 'cancelled') publisher.publish('approval.decided', { approvalId: gate.approvalId, decision }, { step });
            return { answer: { modelOutput: refusalOutput(call.name, current), isError: true } };
          }
          // Announced with the approved call's first send, so a reused result announces nothing again.
          decided = () => publisher.publish('approval.decided', { approvalId: gate.approvalId, decision: 'approve' }, { step });
        }
        // App calls name their connection and its saved revision on their events.
        const app: Record<string, Json> = tool?.declaration === undefined ? {} : { app: { connectionId: tool.declaration.connectionId, revision: tool.declaration.revision } };
        const called = (): void => {
          decided();
          publisher.publish('tool.called', { callId: call.callId, name: call.name, arguments: call.arguments, ...app }, { step });
        };
        if (tool === undefined) {
          called();
          return { answer: toToolAnswer(answer(`Error: there is no tool named "${call.name}".`, true)) };
        }
        switch (toolKind(tool)) {
          case 'http':
            // The saved definition and arguments, sent once per attempt under the call's own key (STC-07).
            return {
              answer: toToolAnswer(
                await context.call(`tool:${call.callId}`, { safe: tool.retry === 'safe', kind: 'tool' }, (request) => {
                  if (request.attempt === 1) called();
                  describeToolCall(request.span, { name: call.name, callId: call.callId, servedBy: 'http' });
                  return callHttpTool(deps.http, tool, call, request, { organizationId: state.organizationId, actor: state.scope, executionId: context.executionId });
                }),
              ),
            };
          case 'app':
            // The saved declaration, checked and sent once per attempt; repeated only when its server says it is safe (STC-12).
            return {
              answer: toToolAnswer(
                await context.call(`tool:${call.callId}`, { safe: isRepeatSafe(tool.declaration!.annotations), kind: 'tool' }, (request) => {
                  if (request.attempt === 1) called();
                  describeToolCall(request.span, { name: call.name, callId: call.callId, servedBy: 'app' });
                  return callAppTool(deps.apps, tool, call, request, {
                    organizationId: state.organizationId,
                    memberId: state.scope.kind === 'member' ? state.scope.id : null,
                    actor: state.scope,
                    sessions,
                    executionId: context.executionId,
                    step,
                    publisher,
                  });
                }),
              ),
            };
          case 'client': {
            const saved = await readClientOutput(deps.db, state.turnId, call);
            if (saved === 'new') called();
            return saved === 'new' || saved === 'waiting' ? 'waiting' : { answer: saved };
          }
          case 'background': {
            const started = children.find((c) => c.callId === call.callId);
            if (started === undefined) {
              called();
              const childId = context.startChild(BACKGROUND_TOOL, { organizationId: state.organizationId, actor: state.scope, tool, call }, { resource: { type: 'tool-call', id: call.callId } });
              children.push({ callId: call.callId, childId });
              return 'waiting-child';
            }
            const child = await deps.readExecution(started.childId as ExecutionId);
            if (child !== null && !isFinal(child.state)) return 'waiting-child';
            const output = await context.childResult(BACKGROUND_TOOL, started.childId as ExecutionId);
            return { answer: output === undefined ? await childFailure(deps.readExecution, started.childId as ExecutionId, call.name) : toToolAnswer(output) };
          }
          case 'plan': {
            called();
            const updated = updatePlan(context, call, step);
            if (updated.plan !== null) plan = updated.plan;
            return { answer: updated.answer };
          }
          case 'remind':
            called();
            return { answer: setReminder(context, state, call) };
          case 'delegate': {
            const task = children.find((c) => c.callId === call.callId);
            if (task === undefined) {
              // Announced once the task started or was refused: a stopped limit check announces nothing yet.
              const started = await startTask(context, state, tool, call, deps);
              called();
              if ('answer' in started) return started;
              children.push({ callId: call.callId, childId: started.childId });
              // A detached task may outlive the Turn: the call answers with its ID at once.
              if (tool.attached === false) return { answer: { modelOutput: JSON.stringify({ executionId: started.childId }), isError: false } };
              return 'waiting-child';
            }
            const answered = await taskAnswer(context, state, task.childId, call, deps);
            return answered === 'running' ? 'waiting-child' : { answer: answered };
          }
        }
      };

      const settle = async (call: ToolCall): Promise<void> => {
        try {
          const outcome = await answerCall(call);
          if (outcome === 'waiting' || outcome === 'waiting-child') {
            waiting.add(call.callId);
            if (outcome === 'waiting-child') waitChildren = true;
            return;
          }
          const result = outcome.answer;
          const declared = state.bot!.tools.find((t) => t.name === call.name)?.declaration;
          const app: Record<string, Json> = declared === undefined ? {} : { app: { connectionId: declared.connectionId, revision: declared.revision } };
          publisher.publish('tool.result', { callId: call.callId, name: call.name, isError: result.isError, ...result.failure, ...app }, { step });
          const files = result.fileIds !== undefined && result.fileIds.length > 0 ? { fileIds: [...result.fileIds] } : {};
          const toolResult: TurnToolResult = { callId: call.callId, name: call.name, modelOutput: result.modelOutput, isError: result.isError, ...files };
          results.push(toolResult);
          await deps.hooks.run('tool.result', { ...hookFacts(state, context.executionId, step), toolResult });
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
 * The answer to a call past `toolCallsPerStep` (decision 076): not run, not announced as called;
 * the model reads which limit held it back, and the step proceeds with the calls that ran.
 */
function overToolCallLimit(limit: number, asked: number): ToolAnswer {
  return {
    modelOutput: `Error: this tool call was not run: the organization's limit toolCallsPerStep allows ${limit} tool calls in one model step, and this step asked for ${asked}. Ask for fewer calls at once.`,
    isError: true,
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

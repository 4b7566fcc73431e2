import { fitToContext, modelLimits, systemMessage, userMessage, type ToolCall, type ToolDefinition } from '@openbot/core';
import { newId } from '@openbot/domain';
import { needsApproval } from '../../../../platform/src/turn-core/approval-policy';
import type { ApprovalGate } from '../../../../platform/src/turn-core/approval-gate';
import type { Queryable } from '@openbot/engine';
import type { Database, Sql } from '../../../../platform/src/database/sql';
import { BudgetStop, RateLimitWait, type ModelCalls, type ModelReadAhead } from '../../../../platform/src/models/model-calls';
import type { BotTool } from '../../../../platform/src/turn-core/tool-spec';
import type { TurnHooks } from './turn-hooks';
import { readBotSnapshot, readHistory, readNewInputs } from './turn-reads';
import type { TurnPhase, TurnPhaseContext } from '../../../../platform/src/turn-core/turn-contract';
import { stopCounting, type BotSnapshot, type GatedCall, type TaskCaps, type TurnMessage, type TurnState } from '../../../../platform/src/turn-core/turn-state';
import { fileTokens, withFileParts, type TurnFileDeps } from './turn-files';
import { memoryMessages, selectTurnMemory, type TurnMemoryDeps } from './turn-memory';
import { countFrom, pastTimeLimit, startCounting } from './turn-clock';
import { pausedMsOf } from '../../executions/pause-time';
import { LimitsUnreadable } from '../../../../platform/src/billing/limits-unreadable';
import { pausedForRecovery } from './recovery-pause';
import { closeSteering } from './turn-steering';

/**
 * One model step of a Turn. The prompt is the Chat's history, the Turn's input (steering input
 * joins here, STC-03) and its earlier steps, fitted to the model's context. The call itself, with
 * its call log entry, usage and `model.*` events, is ModelCalls' (PLAT-06); the Turn streams its
 * text as `text.delta`. The result is saved before any tool runs (STC-06); a takeover reuses it
 * instead of asking the model again (STC-05).
 */
export function modelPhase(deps: {
  readonly db: Database;
  readonly models: ModelCalls;
  readonly hooks: TurnHooks;
  /** The approval-gate hook: where this step's gated calls are requested (decision 078). */
  readonly approvals: ApprovalGate;
  /** What the model is told of each tool, from the kind that answers it. */
  readonly tools: { definitions(tools: readonly BotTool[]): ToolDefinition[] };
  readonly memory?: TurnMemoryDeps;
  /** Where the files of messages are read at each send (absent: a file reaches the model as a note that it cannot be read). */
  readonly files?: TurnFileDeps;
  /** The permissions the Turn's identity allows, saved with each approval request (decision 075); null when it has none. */
  readonly turnPermissions?: (executionId: string) => Promise<readonly string[] | null>;
  /** `toolCallsPerStep` (decision 076): only the first this many calls of a step may ask for an approval; the rest are not run. */
  readonly toolCallsPerStep: number;
}): TurnPhase {
  return {
    async run(context: TurnPhaseContext) {
      let state = context.state;
      const readInputsAndHistory = (db: Queryable, s: TurnState) => Promise.all([readNewInputs(db, s.turnId, s.consumed), readHistory(db, s.chatId, s.turnId)]);
      // The Turn's first step reads its inputs, history and paused time beside the Bot: they depend on none of it.
      // They share one connection, so they go out together: one wait for a connection and one round trip (decision 052).
      let early: Awaited<ReturnType<typeof readInputsAndHistory>> | null = null;
      let pausedEarly: number | null = null;
      let readAhead: ModelReadAhead | null = null;
      if (state.bot === null) {
        const first = state;
        const [read, inputsAndHistory, paused, provider] = await deps.db.connection((db) =>
          Promise.all([
            readBotSnapshot(db, first.chatId),
            readInputsAndHistory(db, first),
            pausedMsOf(db, context.executionId),
            deps.models.readAhead(db, first.organizationId, first.chatId),
          ]),
        );
        // Read but unused when a Bot with memory selects first.
        early = inputsAndHistory;
        pausedEarly = paused;
        readAhead = provider;
        if (read === null) throw new Error(`chat ${state.chatId} no longer exists`);
        // A task's Bot keeps every limit of its source: its own limits can only be tighter (IDN-02).
        const bot = state.caps === undefined ? read : { ...read, limits: capped(read.limits, state.caps) };
        state = { ...state, bot, startedAt: context.clock.now() };
        await deps.hooks.run('turn.started', hookFacts(state, context.executionId, 1));
      }
      if (state.bot!.memory?.enabled === true && state.memory === undefined && deps.memory !== undefined) {
        // Memory selects the context once, before the first model call: `memory.read` commits
        // with the saved selection, so a takeover neither selects again nor emits it twice.
        const inputs = await readNewInputs(deps.db, state.turnId, state.consumed);
        const memory = await selectTurnMemory(deps.db, deps.memory, state, inputs.map((input) => input.content).join('\n'));
        context.emit('memory.read', { ids: [...memory.ids] });
        return { state: { ...state, memory } };
      }
      // Independent reads, side by side: each sequential round trip is added to the time before the model hears anything.
      const [counted, [inputs, history]] = await Promise.all([
        countTime(deps.db, context, state, pausedEarly),
        early ?? readInputsAndHistory(deps.db, state),
      ]);
      state = counted;
      if (pastTimeLimit(state, context.clock.now())) return { state: { ...state, timedOut: true } };
      const bot = state.bot!;
      const step = state.step + 1;
      // The last step its Bot allows: steering closes before its input is read, so all it took is read here (decision 083).
      const stepInputs = step >= bot.limits.maxSteps ? await closeSteering(deps.db, state, false).then(() => readNewInputs(deps.db, state.turnId, state.consumed)) : inputs;
      if (stepInputs.length > 0) {
        const messages = stepInputs.map((input): TurnMessage => (input.fileIds.length > 0 ? { ...userMessage(input.content), fileIds: input.fileIds } : userMessage(input.content)));
        state = { ...state, added: [...state.added, ...messages], consumed: stepInputs.at(-1)!.position };
      }
      const definitions = deps.tools.definitions(bot.tools);
      const prefix: TurnMessage[] = [...(bot.instructions ? [systemMessage(bot.instructions)] : []), ...memoryMessages(state.memory)];
      const fitted = fitToContext([...prefix, ...history, ...state.added], modelLimits(bot.model), definitions);
      const estimatedInputTokens = fitted.estimatedTokens + (await fileTokens(deps.files, state.organizationId, fitted.messages));
      let result;
      try {
        result = await deps.models.call(context, {
          organizationId: state.organizationId,
          model: bot.model,
          messages: fitted.messages,
          // The files' bytes are read for each attempt and never saved with the Turn or the call (decision 036).
          prepareMessages: () => withFileParts(deps.files, state.organizationId, fitted.messages),
          tools: definitions,
          estimatedInputTokens,
          remainingOutputTokens: bot.limits.maxOutputTokens - state.outputTokens,
          maxCostMicros: bot.limits.maxCostMicros ?? null,
          billing: { scopeKind: state.scope.kind, scopeId: state.scope.id, botId: bot.id, chatId: state.chatId, turnId: state.turnId },
          eventStep: step,
          readAhead,
          onText: (text, position) => context.publisher.publishText('text.delta', text, position),
        });
      } catch (error) {
        // Nothing left to reserve: the call did not send, and the Turn ends here (PLAT-08).
        if (error instanceof BudgetStop) {
          await closeSteering(deps.db, state, false);
          return { state: { ...state, pending: [], results: [], stop: error.maxCost ? 'max-cost' : 'budget' } };
        }
        // A rate limit's bucket is empty: wait for it on a durable timer, then this step runs again (LIM-01).
        // The wait is not the Turn's own work, so its time does not count (TASK-03): the step's start counts again.
        if (error instanceof RateLimitWait) {
          const now = context.clock.now();
          return { state: stopCounting(state, now), wait: { until: new Date(now + error.waitMs) } };
        }
        // The limit check could not read the saved usage or limits: nothing was sent, and nothing
        // is guessed; the Turn is left paused, and the step checks again once resumed (DLG-01).
        if (error instanceof LimitsUnreadable) return pausedForRecovery(context, state, 'limit-check-failed', []);
        throw error;
      }
      await deps.hooks.run('model.completed', { ...hookFacts(state, context.executionId, step), message: result.message });

      const usage = result.usage;
      const outputTokens = state.outputTokens + (usage?.outputTokens ?? 0);
      let stop: TurnState['stop'] = result.toolCalls.length > 0 ? null : result.finishReason === 'length' ? 'length' : 'stop';
      // No later model step (its output tokens are spent): the Turn takes no more steering. A final
      // answer: steering input that came during the call is read by one more step, or the Turn takes
      // no more (decision 083). The last step the Bot allows closed it already.
      if (step < bot.limits.maxSteps) {
        if (outputTokens >= bot.limits.maxOutputTokens) await closeSteering(deps.db, state, false);
        else if (stop !== null && (await closeSteering(deps.db, state, true)) === 'unread') stop = null;
      }
      // Only a step with a gated call reads the Turn's rights: its approvals keep them for the approver rule (decision 075).
      const gatedTools = gatedCalls(state, result.toolCalls.slice(0, deps.toolCallsPerStep));
      const turnPermissions = gatedTools.length > 0 && deps.turnPermissions !== undefined ? await deps.turnPermissions(context.executionId) : null;
      const next: TurnState = {
        ...state,
        step,
        added: result.text !== '' || result.toolCalls.length > 0 ? [...state.added, result.message] : state.added,
        pending: result.toolCalls,
        results: [],
        children: [],
        gated: requestApprovals(deps.approvals, context, state, step, gatedTools, turnPermissions),
        outputTokens,
        stop,
      };
      return { state: next };
    },
  };
}

/** This step's calls that need a person's decision, each with its tool (decision 025). */
function gatedCalls(state: TurnState, calls: readonly ToolCall[]): Array<{ readonly call: ToolCall; readonly tool: BotTool }> {
  return calls.flatMap((call) => {
    const tool = state.bot!.tools.find((t) => t.name === call.name);
    return tool !== undefined && needsApproval(tool.approval, call.arguments) ? [{ call, tool }] : [];
  });
}

/**
 * The approval requests of this step's calls that need one (decision 025). Each record is
 * written in this phase's checkpoint transaction, with the saved calls and its
 * `approval.requested` event (APPR-01): after `model.completed`, before any `tool.called`. It
 * keeps who may decide it (the tool's `approvers`) and the rights the Turn runs with (decision 075).
 */
function requestApprovals(
  approvals: ApprovalGate,
  context: TurnPhaseContext,
  state: TurnState,
  step: number,
  calls: ReadonlyArray<{ readonly call: ToolCall; readonly tool: BotTool }>,
  turnPermissions: readonly string[] | null,
): GatedCall[] {
  const gated: GatedCall[] = [];
  const now = context.clock.now();
  for (const { call, tool } of calls) {
    const approvalId = newId();
    const expiresAt = tool.approvalExpiresInSeconds === undefined ? null : now + tool.approvalExpiresInSeconds * 1000;
    approvals.request((sql, params) => context.commands.write(sql, params), {
      approvalId,
      organizationId: state.organizationId,
      executionId: context.executionId,
      chatId: state.chatId,
      turnId: state.turnId,
      step,
      call,
      tool,
      requestedAt: new Date(now),
      expiresAt: expiresAt === null ? null : new Date(expiresAt),
      turnPermissions,
    });
    context.emit('approval.requested', { step, approvalId, callId: call.callId, name: call.name }, { step });
    gated.push({ callId: call.callId, approvalId, expiresAt });
  }
  return gated;
}

/** A task's limits: its Bot's, each at most what its parent had left (a cost cap of null means none). */
function capped(limits: BotSnapshot['limits'], caps: TaskCaps): BotSnapshot['limits'] {
  const own = limits.maxCostMicros ?? null;
  const maxCostMicros = caps.maxCostMicros === undefined ? own : own === null ? caps.maxCostMicros : Math.min(own, caps.maxCostMicros);
  return {
    maxSteps: Math.min(limits.maxSteps, caps.maxSteps),
    maxSeconds: Math.min(limits.maxSeconds, caps.maxSeconds),
    maxOutputTokens: Math.min(limits.maxOutputTokens, caps.maxOutputTokens),
    maxCostMicros,
  };
}

export function hookFacts(state: TurnState, executionId: string, step: number) {
  return { organizationId: state.organizationId, chatId: state.chatId, turnId: state.turnId, executionId, step };
}

/** The Turn's time as the step starts, from the paused time read early when there is one. */
async function countTime(db: Sql, context: TurnPhaseContext, state: TurnState, pausedEarly: number | null): Promise<TurnState> {
  return pausedEarly === null ? startCounting(db, context, state) : countFrom(context, state, pausedEarly);
}

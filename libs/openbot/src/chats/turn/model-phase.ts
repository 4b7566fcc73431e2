import { fitToContext, modelLimits, runModelStep, systemMessage, userMessage, type ChatMessage } from '@openbot/core';
import type { Pool } from 'pg';
import type { ModelRegistry } from '../../models/model-registry';
import { usageHolds } from '../../usage/usage-holds';
import { usageRecords, type UsageCall } from '../../usage/usage-records';
import type { TurnHooks } from './turn-hooks';
import { readBotSnapshot, readHistory, readNewInputs } from './turn-reads';
import type { TurnPhase, TurnPhaseContext } from './turn-contract';
import type { TurnState } from './turn-state';
import { toolDefinition } from './tool-definition';

/** Attempts of one model step, the first included (CALL-04: each one a new attempt and a new start event). */
const MODEL_ATTEMPTS = 3;

/**
 * One model step of a Turn. The prompt is the Chat's history, the Turn's input (steering input
 * joins here, STC-03) and its earlier steps, fitted to the model's context. The call goes through
 * the ModelRegistry (PLAT-06) and the call log: the result, its usage record and
 * `model.completed` commit in one transaction (USE-01) before any tool runs (STC-06); a takeover
 * reuses a saved result instead of asking the model again (STC-05).
 */
export function modelPhase(deps: { readonly pool: Pool; readonly models: ModelRegistry; readonly hooks: TurnHooks }): TurnPhase {
  return {
    async run(context: TurnPhaseContext) {
      let state = context.state;
      if (state.bot === null) {
        const bot = await readBotSnapshot(deps.pool, state.chatId);
        if (bot === null) throw new Error(`chat ${state.chatId} no longer exists`);
        state = { ...state, bot, startedAt: context.clock.now() };
        await deps.hooks.run('turn.started', hookFacts(state, context.executionId, 1));
      }
      const bot = state.bot!;
      const inputs = await readNewInputs(deps.pool, state.turnId, state.consumed);
      if (inputs.length > 0) {
        state = { ...state, added: [...state.added, ...inputs.map((input) => userMessage(input.content))], consumed: inputs.at(-1)!.position };
      }
      const step = state.step + 1;
      const history = await readHistory(deps.pool, state.chatId, state.turnId);
      const definitions = bot.tools.map(toolDefinition);
      const prefix: ChatMessage[] = bot.instructions ? [systemMessage(bot.instructions)] : [];
      const fitted = fitToContext([...prefix, ...history, ...state.added], modelLimits(bot.model), definitions);
      const resolved = await deps.models.resolve(state.organizationId, bot.model);
      const publisher = context.publisher;
      const position = (attempt: number) => ({ step, attempt });
      // The call log names this call `<step>:model` (STC-10); its holds use the same key.
      const callKey = `${context.step}:model`;
      const billing = (callId: string) => usageCall(state, callId, context.executionId, fitted.estimatedTokens);

      const result = await context.call(
        'model',
        {
          safe: true,
          kind: 'model',
          attempts: MODEL_ATTEMPTS,
          onFailedAttempt: async ({ attempt, error, retrying }) => {
            await usageHolds.release(deps.pool, context.executionId, callKey);
            publisher.publish('model.failed', { category: failureCategory(error), retrying }, position(attempt));
            await publisher.flush();
          },
          // An attempt an earlier owner left open may still finish late: unknown until it does (USE-04).
          onAbandonedAttempt: (tx, abandoned) => usageRecords.recordUnsettled(tx, billing(abandoned.callId)),
          commit: async (tx, saved) => {
            const stepResult = saved.result;
            const usage = stepResult.usage ? { inputTokens: stepResult.usage.inputTokens, outputTokens: stepResult.usage.outputTokens } : null;
            // One record per call ID (USE-01); missing usage is unknown with the estimate, never zero (USE-02).
            await usageRecords.record(tx, billing(saved.callId), usage);
            await usageHolds.release(tx, context.executionId, callKey);
            await publisher.publishIn(tx, [{ type: 'model.completed', payload: { usage }, ...position(saved.attempt) }]);
          },
        },
        async (request) => {
          await usageHolds.open(deps.pool, {
            organizationId: state.organizationId,
            executionId: context.executionId,
            callKey,
            attempt: request.attempt,
            estimatedInputTokens: fitted.estimatedTokens,
          });
          publisher.publish('model.started', null, position(request.attempt));
          // Each attempt builds its text from nothing: a dropped attempt's text is never joined to this one (CALL-04).
          const stepResult = await runModelStep(
            resolved.provider,
            { model: resolved.modelId, messages: fitted.messages, tools: definitions, idempotencyKey: request.idempotencyKey, signal: request.signal },
            (text) => publisher.publish('text.delta', { text }, position(request.attempt)),
          );
          // Every delta is stored before the result is: `model.completed` always follows them.
          await publisher.flush();
          return stepResult;
        },
      );
      publisher.announce();
      await deps.hooks.run('model.completed', { ...hookFacts(state, context.executionId, step), message: result.message });

      const usage = result.usage;
      const next: TurnState = {
        ...state,
        step,
        added: result.text !== '' || result.toolCalls.length > 0 ? [...state.added, result.message] : state.added,
        pending: result.toolCalls,
        results: [],
        outputTokens: state.outputTokens + (usage?.outputTokens ?? 0),
        stop: result.toolCalls.length > 0 ? null : result.finishReason === 'length' ? 'length' : 'stop',
      };
      return { state: next };
    },
  };
}

export function hookFacts(state: TurnState, executionId: string, step: number) {
  return { organizationId: state.organizationId, chatId: state.chatId, turnId: state.turnId, executionId, step };
}

function failureCategory(error: unknown): string {
  const category = (error as { category?: unknown } | null)?.category;
  return typeof category === 'string' ? category : 'unavailable';
}

/** The billing identity of one model call of this Turn. */
function usageCall(state: TurnState, callId: string, executionId: string, estimatedInputTokens: number): UsageCall {
  return {
    organizationId: state.organizationId,
    scopeKind: state.scope.kind,
    scopeId: state.scope.id,
    botId: state.bot?.id ?? null,
    chatId: state.chatId,
    turnId: state.turnId,
    executionId,
    callId,
    model: state.bot?.model ?? '',
    estimatedInputTokens,
  };
}

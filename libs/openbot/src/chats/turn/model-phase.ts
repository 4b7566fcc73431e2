import { fitToContext, modelLimits, systemMessage, userMessage, type ChatMessage } from '@openbot/core';
import type { Pool } from 'pg';
import { BudgetStop, RateLimitWait, type ModelCalls } from '../../models/model-calls';
import type { TurnHooks } from './turn-hooks';
import { readBotSnapshot, readHistory, readNewInputs } from './turn-reads';
import type { TurnPhase, TurnPhaseContext } from './turn-contract';
import type { TurnState } from './turn-state';
import { toolDefinition } from './tool-definition';

/**
 * One model step of a Turn. The prompt is the Chat's history, the Turn's input (steering input
 * joins here, STC-03) and its earlier steps, fitted to the model's context. The call itself, with
 * its call log entry, usage and `model.*` events, is ModelCalls' (PLAT-06); the Turn streams its
 * text as `text.delta`. The result is saved before any tool runs (STC-06); a takeover reuses it
 * instead of asking the model again (STC-05).
 */
export function modelPhase(deps: { readonly pool: Pool; readonly models: ModelCalls; readonly hooks: TurnHooks }): TurnPhase {
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
      let result;
      try {
        result = await deps.models.call(context, {
          organizationId: state.organizationId,
          model: bot.model,
          messages: fitted.messages,
          tools: definitions,
          estimatedInputTokens: fitted.estimatedTokens,
          remainingOutputTokens: bot.limits.maxOutputTokens - state.outputTokens,
          maxCostMicros: bot.limits.maxCostMicros ?? null,
          billing: { scopeKind: state.scope.kind, scopeId: state.scope.id, botId: bot.id, chatId: state.chatId, turnId: state.turnId },
          eventStep: step,
          onText: (text, position) => context.publisher.publish('text.delta', { text }, position),
        });
      } catch (error) {
        // Nothing left to reserve: the call did not send, and the Turn ends here (PLAT-08).
        if (error instanceof BudgetStop) return { state: { ...state, pending: [], results: [], stop: error.maxCost ? 'max-cost' : 'budget' } };
        // A rate limit's bucket is empty: wait for it on a durable timer, then this step runs again (LIM-01).
        if (error instanceof RateLimitWait) return { state, wait: { until: new Date(context.clock.now() + error.waitMs) } };
        throw error;
      }
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

import type { ModelStepResult } from '@openbot/core';
import type { TraceSpan } from '@openbot/engine';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
  ATTR_GEN_AI_SYSTEM,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} from '@opentelemetry/semantic-conventions/incubating';
import type { ModelProviderKind } from '../model-providers/model-provider-view';

/**
 * The OpenTelemetry GenAI semantic conventions on a model call's span (docs/decisions/040):
 * operation, provider, requested model, the token cap, then usage and time to first chunk. Never
 * the messages, the system prompt, the answer or tool arguments (the conventions' opt-in content
 * attributes are never set), and never the provider's key or base URL.
 */
export function describeModelCall(span: TraceSpan, call: { readonly providerKind: ModelProviderKind; readonly model: string; readonly maxTokens: number }): void {
  const provider = GEN_AI_PROVIDER[call.providerKind];
  span.rename(`chat ${call.model}`);
  span.set({
    [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
    [ATTR_GEN_AI_PROVIDER_NAME]: provider,
    // The older name of the provider attribute, still what many backends read.
    [ATTR_GEN_AI_SYSTEM]: provider,
    [ATTR_GEN_AI_REQUEST_MODEL]: call.model,
    [ATTR_GEN_AI_REQUEST_MAX_TOKENS]: call.maxTokens,
    'openbot.model.provider_kind': call.providerKind,
  });
}

/** What the answer tells: usage (when the provider reported it), the finish reason, time to the first text. */
export function describeModelAnswer(span: TraceSpan, result: ModelStepResult, firstTokenSeconds: number | null): void {
  span.set({
    'openbot.model.finish_reason': result.finishReason,
    ...(result.usage !== null
      ? {
          [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: result.usage.inputTokens,
          [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: result.usage.outputTokens,
          ...(typeof result.usage.cachedInputTokens === 'number' ? { [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: result.usage.cachedInputTokens } : {}),
        }
      : {}),
    ...(firstTokenSeconds !== null ? { [ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK]: firstTokenSeconds } : {}),
  });
}

/** `gen_ai.provider.name` values: an OpenAI-compatible provider speaks OpenAI's API. */
const GEN_AI_PROVIDER: Readonly<Record<ModelProviderKind, string>> = {
  'openai-compatible': 'openai',
  anthropic: 'anthropic',
};

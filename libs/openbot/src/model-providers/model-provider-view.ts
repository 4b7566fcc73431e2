import type { ModelProviderId } from '@openbot/domain';

/**
 * The provider kinds an organization may register. `anthropic` is accepted and stored, but no
 * adapter calls it yet (the ModelRegistry's Anthropic adapter arrives later in issue 4).
 */
export const MODEL_PROVIDER_KINDS = ['openai-compatible', 'anthropic'] as const;
export type ModelProviderKind = (typeof MODEL_PROVIDER_KINDS)[number];

/** The sealed record purpose of a provider's API key (SEC-01). */
export const MODEL_PROVIDER_API_KEY_PURPOSE = 'model-provider.api-key';

/** What the API may show of a provider: never its API key, nor where the sealed key lives. */
export interface ModelProviderView {
  readonly id: ModelProviderId;
  readonly name: string;
  readonly kind: ModelProviderKind;
  readonly baseUrl: string;
}

/** The columns of a ModelProviderView, for handlers that read `model_providers` directly. */
export const MODEL_PROVIDER_VIEW_COLUMNS = `id, name, kind, base_url AS "baseUrl"`;

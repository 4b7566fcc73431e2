import type { ModelProviderId } from '@openbot/domain';
import type { VaultReference } from '../vaults/vault-view';

/**
 * The provider kinds an organization may register. `anthropic` is accepted and stored, but no
 * adapter calls it yet (the ModelRegistry's Anthropic adapter arrives later in issue 4).
 */
export const MODEL_PROVIDER_KINDS = ['openai-compatible', 'anthropic'] as const;
export type ModelProviderKind = (typeof MODEL_PROVIDER_KINDS)[number];

/** The sealed record purpose of a provider's API key (SEC-01). */
export const MODEL_PROVIDER_API_KEY_PURPOSE = 'model-provider.api-key';

/** What the API may show of a provider: never its API key's value, nor where the sealed key lives. */
export interface ModelProviderView {
  readonly id: ModelProviderId;
  readonly name: string;
  readonly kind: ModelProviderKind;
  readonly baseUrl: string;
  /** The key as a Vault reference, as it was given; null for a sealed literal key or none (decision 029). */
  readonly apiKey: VaultReference | null;
}

/** The columns of a ModelProviderView, for handlers that read `model_providers` directly. */
export const MODEL_PROVIDER_VIEW_COLUMNS = `id, name, kind, base_url AS "baseUrl", api_key_reference AS "apiKey"`;

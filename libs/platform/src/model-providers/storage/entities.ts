import { ModelProviderEntity } from './model-provider.entity';

/** The model providers module's entity. */
export const MODEL_PROVIDERS_ENTITIES = [ModelProviderEntity] as const;

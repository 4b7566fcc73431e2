import { ApiKeyEntity } from './api-key.entity';

/** The API keys module's entity (a member's or a service's credential). */
export const API_KEYS_ENTITIES = [ApiKeyEntity] as const;

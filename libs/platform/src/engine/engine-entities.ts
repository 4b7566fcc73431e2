import { ENGINE_ENTITIES } from '@openbot/engine/node';

/** The engine's own tables' entities, for the composition root's list (the node entry stays in the platform's engine wiring). */
export const ENGINE_MODULE_ENTITIES = ENGINE_ENTITIES;

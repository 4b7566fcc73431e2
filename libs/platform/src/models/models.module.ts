import { Global, Module } from '@nestjs/common';
import { ModelCalls } from './model-calls';
import { ModelRegistry } from './model-registry';

/**
 * ModelCalls (PLAT-06): every model call of the platform goes through it. The ModelRegistry
 * behind it is not exported: no other provider can resolve a model and call it directly.
 */
@Global()
@Module({ providers: [ModelRegistry, ModelCalls], exports: [ModelCalls] })
export class ModelsModule {}

import { Global, Module } from '@nestjs/common';
import { ModelRegistry } from './model-registry';

/** The ModelRegistry (PLAT-06): every model call of the platform goes through it. */
@Global()
@Module({ providers: [ModelRegistry], exports: [ModelRegistry] })
export class ModelsModule {}

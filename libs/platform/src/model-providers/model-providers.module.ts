import { Module } from '@nestjs/common';
import { CreateModelProviderHandler } from './commands/create-model-provider.command';
import { DeleteModelProviderHandler } from './commands/delete-model-provider.command';
import { GetModelProviderHandler } from './queries/get-model-provider.query';
import { ListModelProvidersHandler } from './queries/list-model-providers.query';

@Module({ providers: [CreateModelProviderHandler, DeleteModelProviderHandler, ListModelProvidersHandler, GetModelProviderHandler] })
export class ModelProvidersModule {}

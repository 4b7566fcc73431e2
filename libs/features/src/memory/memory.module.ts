import { Global, Inject, Module, type OnModuleInit } from '@nestjs/common';
import { Engine } from '@openbot/engine';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../platform/src/config/runtime-config';
import { Database } from '../../../platform/src/database/sql';
import { ModelCalls } from '../../../platform/src/models/model-calls';
import { CreateMemoryItemHandler } from './commands/create-memory-item.command';
import { DeleteMemoryItemHandler } from './commands/delete-memory-item.command';
import { UpdateMemoryItemHandler } from './commands/update-memory-item.command';
import { memoryLearnWorkflow } from './learning/memory-learn.workflow';
import { MemoryStore } from './memory-store';
import { GetMemoryItemHandler } from './queries/get-memory-item.query';
import { ListMemoryItemsHandler } from './queries/list-memory-items.query';

/**
 * Bot memory (decision 030): the item routes' use cases, the MemoryStore the Turn selects through,
 * and the learning workflow. It sits above bots (a Bot's memory switches live in bots/bot-memory.ts)
 * and fills rekey's KeyedStore port with its content and word index (memory-rekey.ts, decision 079).
 */
@Global()
@Module({
  providers: [MemoryStore, CreateMemoryItemHandler, UpdateMemoryItemHandler, DeleteMemoryItemHandler, ListMemoryItemsHandler, GetMemoryItemHandler],
  exports: [MemoryStore],
})
export class MemoryModule implements OnModuleInit {
  constructor(
    @Inject(Engine) private readonly engine: Engine,
    @Inject(Database) private readonly db: Database,
    @Inject(ModelCalls) private readonly models: ModelCalls,
    @Inject(MemoryStore) private readonly memory: MemoryStore,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  onModuleInit(): void {
    this.engine.register(memoryLearnWorkflow({ db: this.db, models: this.models, memory: this.memory, permits: this.config.limits.memoryHelperPermits }));
  }
}

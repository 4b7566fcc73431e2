import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { AppSessions } from '../apps/app-sessions';
import { AppsModule } from '../apps/apps.module';
import { Engine } from '@openbot/engine';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../config/runtime-config';
import { Database } from '../database/sql';
import { EgressClient } from '../egress/egress-client';
import { MemoryStore } from '../memory/memory-store';
import { readLiterals } from '../bots/tool-header-secrets';
import { SealedRecords } from '../sealing/sealed-records';
import { OBJECT_STORE, type ObjectStore } from '../object-store/object-store';
import { ModelCalls } from '../models/model-calls';
import { SqlFailureRecorder } from '../errors/sql-failure-recorder';
import { VaultSecrets } from '../vaults/vault-secrets';
import { identityPermissions, newId, type ErrorId } from '@openbot/domain';
import { CreateChatHandler } from './commands/create-chat.command';
import { DeleteChatHandler } from './commands/delete-chat.command';
import { PostMessageHandler } from './commands/post-message.command';
import { PostToolOutputHandler } from './commands/post-tool-output.command';
import { StopChatHandler } from './commands/stop-chat.command';
import { chatDeleteWorkflow } from './delete/chat-delete.workflow';
import { GetChatHandler } from './queries/get-chat.query';
import { ListChatsHandler } from './queries/list-chats.query';
import { ListMessagesHandler } from './queries/list-messages.query';
import { reminderWorkflow } from '../reminders/reminder.workflow';
import { backgroundToolWorkflow } from './turn/background-tool.workflow';
import { turnWorkflow } from './turn/turn.workflow';
import { TurnHooks } from './turn/turn-hooks';

@Module({
  imports: [AppsModule],
  providers: [
    CreateChatHandler,
    GetChatHandler,
    ListChatsHandler,
    PostMessageHandler,
    ListMessagesHandler,
    PostToolOutputHandler,
    StopChatHandler,
    DeleteChatHandler,
    TurnHooks,
  ],
  exports: [TurnHooks],
})
export class ChatsModule implements OnModuleInit {
  constructor(
    @Inject(Engine) private readonly engine: Engine,
    @Inject(Database) private readonly db: Database,
    @Inject(ModelCalls) private readonly models: ModelCalls,
    @Inject(EgressClient) private readonly egress: EgressClient,
    @Inject(TurnHooks) private readonly hooks: TurnHooks,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
    @Inject(VaultSecrets) private readonly vaults: VaultSecrets,
    @Inject(SqlFailureRecorder) private readonly failures: SqlFailureRecorder,
    @Inject(MemoryStore) private readonly memory: MemoryStore,
    @Inject(AppSessions) private readonly sessions: AppSessions,
    @Inject(OBJECT_STORE) private readonly store: ObjectStore,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
  ) {}

  /** Registers the Chat workflows with this node's engine (EXE-05), each from its `*.workflow.ts`. */
  onModuleInit(): void {
    const secrets = {
      open: this.vaults.open.bind(this.vaults),
      literals: (recordId: string, url: string) => readLiterals(this.sealed, recordId, url),
      // A refused reference is an error record of its own (category forbidden), named in the tool's answer (ERR-01).
      recordRefusal: async (refusal: Error, executionId: string): Promise<string> => {
        const errorId = newId<ErrorId>();
        await this.db.transaction((tx) => this.failures.record(tx, { errorId, category: 'forbidden', origin: 'vault reference', cause: refusal, executionId }));
        return errorId;
      },
    };
    const http = { fetch: this.egress.fetch, answerLimitBytes: this.egress.limits.toolAnswerBytes, secrets };
    this.engine.register(
      turnWorkflow({
        db: this.db,
        models: this.models,
        hooks: this.hooks,
        http,
        apps: { db: this.db, sessions: this.sessions, failures: this.failures, callTimeoutMs: this.config.appCallTimeoutSeconds * 1000 },
        readExecution: (id) => this.engine.get(id),
        maxDelegationDepth: this.config.maxDelegationDepth,
        toolCallsPerStep: this.config.organizationLimits.toolCallsPerStep,
        memory: { store: this.memory, budgetTokens: this.config.limits.memoryContextTokens },
        files: { db: this.db, store: this.store },
        turnPermissions: async (executionId) => identityPermissions(await this.engine.identity(executionId)),
      }),
    );
    this.engine.register(backgroundToolWorkflow({ http }));
    this.engine.register(chatDeleteWorkflow({ db: this.db }));
    this.engine.register(reminderWorkflow({ db: this.db, engine: () => this.engine, defaultPrice: this.config.defaultPrice }));
  }
}

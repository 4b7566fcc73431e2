import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { Engine } from '@openbot/engine';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../platform/src/config/runtime-config';
import { Database } from '../../../platform/src/database/sql';
import { MemoryStore } from '../memory/memory-store';
import { OBJECT_STORE, type ObjectStore } from '../../../platform/src/object-store/object-store';
import { ModelCalls } from '../../../platform/src/models/model-calls';
import { ToolCalls } from '../../../platform/src/tool-calls/tool-calls';
import { ApprovalGates } from '../../../platform/src/turn-core/approval-gate';
import { ChatInputPort } from '../../../platform/src/turn-core/chat-inputs';
import { MessageAdmissions } from './message-admissions';
import { TurnTools } from '../../../platform/src/turn-core/turn-tool';
import { identityPermissions } from '@openbot/domain';
import { CreateChatHandler } from './commands/create-chat.command';
import { DeleteChatHandler } from './commands/delete-chat.command';
import { PostMessageHandler } from './commands/post-message.command';
import { PostToolOutputHandler } from './commands/post-tool-output.command';
import { StopChatHandler } from './commands/stop-chat.command';
import { chatDeleteWorkflow } from './delete/chat-delete.workflow';
import { BotKeptByChatsHandler } from './queries/bot-kept-by-chats.query';
import { GetChatHandler } from './queries/get-chat.query';
import { ListChatsHandler } from './queries/list-chats.query';
import { ListMessagesHandler } from './queries/list-messages.query';
import { clientTool } from './tools/client-tool';
import { delegateTool } from './tools/delegate-tool';
import { turnWorkflow } from './turn/turn.workflow';
import { TurnHooks } from './turn/turn-hooks';

/**
 * Chats and their Turns (decision 009). The Turn's low layer is the platform's turn-core; the tool
 * kinds are their features' (registered with TurnTools), answered through ToolCalls; the Chats
 * feature owns the client and delegate kinds. Nothing below Chats imports it: what reminders
 * need (admitting a message) reaches it through a port, and Bots ask it through a query.
 */
@Module({
  providers: [
    CreateChatHandler,
    GetChatHandler,
    ListChatsHandler,
    PostMessageHandler,
    ListMessagesHandler,
    PostToolOutputHandler,
    StopChatHandler,
    DeleteChatHandler,
    BotKeptByChatsHandler,
    MessageAdmissions,
    TurnHooks,
  ],
  exports: [TurnHooks, MessageAdmissions],
})
export class ChatsModule implements OnModuleInit {
  constructor(
    @Inject(Engine) private readonly engine: Engine,
    @Inject(Database) private readonly db: Database,
    @Inject(ModelCalls) private readonly models: ModelCalls,
    @Inject(TurnHooks) private readonly hooks: TurnHooks,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
    @Inject(MemoryStore) private readonly memory: MemoryStore,
    @Inject(OBJECT_STORE) private readonly store: ObjectStore,
    @Inject(ToolCalls) private readonly toolCalls: ToolCalls,
    @Inject(TurnTools) private readonly tools: TurnTools,
    @Inject(ApprovalGates) private readonly approvals: ApprovalGates,
    @Inject(MessageAdmissions) private readonly admissions: MessageAdmissions,
    @Inject(ChatInputPort) private readonly inputs: ChatInputPort,
  ) {}

  /** Registers the Chat workflows with this node's engine (EXE-05), each from its `*.workflow.ts`, and the Chats' tool kinds. */
  onModuleInit(): void {
    this.inputs.register(this.admissions);
    this.tools.register(clientTool(this.db));
    this.tools.register(
      delegateTool({
        db: this.db,
        readExecution: (id) => this.engine.get(id),
        maxDepth: this.config.maxDelegationDepth,
        admission: { limits: this.config.organizationLimits, defaultPrice: this.config.defaultPrice },
      }),
    );
    this.engine.register(
      turnWorkflow({
        db: this.db,
        models: this.models,
        hooks: this.hooks,
        toolCalls: this.toolCalls,
        approvals: this.approvals,
        toolCallsPerStep: this.config.organizationLimits.toolCallsPerStep,
        memory: { store: this.memory, budgetTokens: this.config.limits.memoryContextTokens },
        files: { db: this.db, store: this.store },
        turnPermissions: async (executionId) => identityPermissions(await this.engine.identity(executionId)),
      }),
    );
    this.engine.register(chatDeleteWorkflow({ db: this.db }));
  }
}

import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { Engine } from '@openbot/engine';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../platform/src/config/runtime-config';
import { Database } from '../../../platform/src/database/sql';
import { ChatInputPort } from '../../../platform/src/turn-core/chat-inputs';
import { TurnTools } from '../../../platform/src/turn-core/turn-tool';
import { CancelReminderHandler } from './commands/cancel-reminder.command';
import { ListRemindersHandler } from './queries/list-reminders.query';
import { remindTool } from './remind-tool';
import { reminderWorkflow } from './reminder.workflow';

/**
 * Reminders set by a Turn's `remind` tool (registered here, decision 078): listed and cancelled
 * here; delivered by `chat.reminder`, which admits its message through the Turn core's
 * ChatInputPort (a port the Chats feature fills), so Reminders never import Chats.
 */
@Module({ providers: [ListRemindersHandler, CancelReminderHandler] })
export class RemindersModule implements OnModuleInit {
  constructor(
    @Inject(Engine) private readonly engine: Engine,
    @Inject(Database) private readonly db: Database,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
    @Inject(TurnTools) private readonly tools: TurnTools,
    @Inject(ChatInputPort) private readonly chats: ChatInputPort,
  ) {}

  onModuleInit(): void {
    this.tools.register(remindTool);
    this.engine.register(reminderWorkflow({ db: this.db, engine: () => this.engine, chats: this.chats, defaultPrice: this.config.defaultPrice }));
  }
}

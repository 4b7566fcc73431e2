import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { TurnTools } from '../turn-core/turn-tool';
import { CancelReminderHandler } from './commands/cancel-reminder.command';
import { ListRemindersHandler } from './queries/list-reminders.query';
import { remindTool } from './remind-tool';

/** Reminders set by a Turn's `remind` tool (registered here, decision 078): listed and cancelled here; delivered by `chat.reminder`. */
@Module({ providers: [ListRemindersHandler, CancelReminderHandler] })
export class RemindersModule implements OnModuleInit {
  constructor(@Inject(TurnTools) private readonly tools: TurnTools) {}

  onModuleInit(): void {
    this.tools.register(remindTool);
  }
}

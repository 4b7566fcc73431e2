import { Module } from '@nestjs/common';
import { CancelReminderHandler } from './commands/cancel-reminder.command';
import { ListRemindersHandler } from './queries/list-reminders.query';

/** Reminders set by a Turn's `remind` tool: listed and cancelled here; delivered by `chat.reminder`. */
@Module({ providers: [ListRemindersHandler, CancelReminderHandler] })
export class RemindersModule {}

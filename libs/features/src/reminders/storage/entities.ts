import { ReminderEntity } from './reminder.entity';

/** The reminders module's entity. */
export const REMINDERS_ENTITIES = [ReminderEntity] as const;

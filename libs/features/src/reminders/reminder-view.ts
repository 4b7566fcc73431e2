/** A reminder as the API shows it (`GET /v1/reminders`). */
export interface ReminderView {
  readonly id: string;
  readonly chatId: string;
  readonly message: string;
  readonly dueAt: Date;
  readonly state: 'pending' | 'sent' | 'cancelled';
}

export const REMINDER_VIEW_COLUMNS = `id, chat_id AS "chatId", message, due_at AS "dueAt", state`;

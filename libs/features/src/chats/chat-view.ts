import type { BotId, ChatId } from '@openbot/domain';

/** What the API may show of a Chat. */
export interface ChatView {
  readonly id: ChatId;
  readonly botId: BotId;
  /** A task's Chat: the execution that delegated it; null otherwise. */
  readonly parentExecutionId: string | null;
  readonly createdAt: Date;
}

/** The columns of a ChatView, for handlers that read `chats` directly. */
export const CHAT_VIEW_COLUMNS = `id, bot_id AS "botId", parent_execution_id AS "parentExecutionId", created_at AS "createdAt"`;

/** The foreign key that keeps a Bot with Chats from being deleted. */
export const CHATS_BOT_FOREIGN_KEY = 'chats_bot_id_fkey';

/** True when `error` is PostgreSQL's foreign-key violation (23503) on `chats.bot_id`. */
export function isChatsBotForeignKeyViolation(error: unknown): boolean {
  // pg's own error, or TypeORM's wrapper of it (`driverError`).
  const wrapped = error as { code?: unknown; constraint?: unknown; driverError?: { code?: unknown; constraint?: unknown } } | null;
  const cause = wrapped?.driverError ?? wrapped;
  return cause?.code === '23503' && cause.constraint === CHATS_BOT_FOREIGN_KEY;
}

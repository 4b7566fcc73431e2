import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, newId, NotFound, type ChatId, type MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { CHAT_VIEW_COLUMNS, isChatsBotForeignKeyViolation, type ChatView } from '../chat-view';

/**
 * Creates a Chat with a Bot of the caller's organization. A malformed, unknown or other
 * organization's Bot is NotFound, all alike (IDN-08); the check and the insert are one statement.
 */
export class CreateChat extends Command<ChatView> {
  constructor(
    readonly caller: MemberCaller,
    readonly botId: string,
  ) {
    super();
  }
}

@CommandHandler(CreateChat)
export class CreateChatHandler implements ICommandHandler<CreateChat> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, botId }: CreateChat): Promise<ChatView> {
    if (!isUuid(botId)) throw new NotFound('Bot');
    const id = newId<ChatId>();
    let row: ChatView | undefined;
    try {
      // The organization is in the Bot lookup, so another organization's Bot never counts (IDN-08).
      row = await this.db.one<ChatView>(
        `INSERT INTO chats (id, organization_id, bot_id)
         SELECT $1, $2, $3
          WHERE EXISTS (SELECT 1 FROM bots WHERE id = $3 AND organization_id = $2)
         RETURNING ${CHAT_VIEW_COLUMNS}`,
        [id, caller.organizationId, botId],
      );
    } catch (error) {
      // The Bot was deleted between the lookup and the foreign-key check.
      if (isChatsBotForeignKeyViolation(error)) throw new NotFound('Bot');
      throw error;
    }
    if (row === undefined) throw new NotFound('Bot');
    return row;
  }
}

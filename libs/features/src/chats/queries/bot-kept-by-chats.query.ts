import { QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { BotKeptByChats } from '../../bots/queries/bot-kept-by-chats.query';
import { isChatsBotForeignKeyViolation } from '../chat-view';

/** Answers Bots' question whether a delete failed on the Chats' foreign key to their Bot. */
@QueryHandler(BotKeptByChats)
export class BotKeptByChatsHandler implements IQueryHandler<BotKeptByChats> {
  execute({ failure }: BotKeptByChats): Promise<boolean> {
    return Promise.resolve(isChatsBotForeignKeyViolation(failure));
  }
}

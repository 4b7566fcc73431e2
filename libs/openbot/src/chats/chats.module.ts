import { Module } from '@nestjs/common';
import { CreateChatHandler } from './commands/create-chat.command';
import { GetChatHandler } from './queries/get-chat.query';
import { ListChatsHandler } from './queries/list-chats.query';

@Module({ providers: [CreateChatHandler, GetChatHandler, ListChatsHandler] })
export class ChatsModule {}

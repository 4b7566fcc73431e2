import { Module } from '@nestjs/common';
import { CreateChatHandler } from './commands/create-chat.command';
import { DeleteChatHandler } from './commands/delete-chat.command';
import { PostMessageHandler } from './commands/post-message.command';
import { PostToolOutputHandler } from './commands/post-tool-output.command';
import { StopChatHandler } from './commands/stop-chat.command';
import { GetChatHandler } from './queries/get-chat.query';
import { ListChatsHandler } from './queries/list-chats.query';
import { ListMessagesHandler } from './queries/list-messages.query';
import { TurnHooks } from './turn/turn-hooks';
import { TurnWorkflows } from './turn/turn-workflows';

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
    TurnWorkflows,
    TurnHooks,
  ],
  exports: [TurnHooks],
})
export class ChatsModule {}

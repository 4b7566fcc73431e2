import { ChatCommandEntity } from './chat-command.entity';
import { ChatMessageEntity } from './chat-message.entity';
import { ChatTurnEntity } from './chat-turn.entity';
import { ChatEntity } from './chat.entity';
import { ClientToolCallEntity } from './client-tool-call.entity';
import { TurnHookWriteEntity } from './turn-hook-write.entity';

/** The chats module's entities (chats, their Turns and messages, commands, client tool calls, hook writes). */
export const CHATS_ENTITIES = [ChatEntity, ChatTurnEntity, ChatMessageEntity, ChatCommandEntity, ClientToolCallEntity, TurnHookWriteEntity] as const;

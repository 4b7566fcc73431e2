import { ApiProperty } from '@nestjs/swagger';
import type { ChatView } from '@openbot/features';
import { IsUUID } from 'class-validator';

export class CreateChatRequest {
  @ApiProperty({ format: 'uuid', description: 'A Bot of the organization' })
  @IsUUID('all', { message: 'botId must be a UUID' })
  botId!: string;
}

export class ChatBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  botId!: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: "A task's Chat: the execution whose delegate call created it" })
  parentExecutionId!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class ChatPage {
  @ApiProperty({ type: [ChatBody] })
  data!: ChatBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

/** Lists every field explicitly, so a new column never leaks by default. */
export function toChatBody(chat: ChatView): ChatBody {
  return {
    id: chat.id,
    botId: chat.botId,
    parentExecutionId: chat.parentExecutionId,
    createdAt: chat.createdAt.toISOString(),
  };
}

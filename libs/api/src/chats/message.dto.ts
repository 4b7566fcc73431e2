import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { MessageAdmission, MessageView } from '@openbot/openbot';
import { IsBoolean, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';

export const MAX_MESSAGE_CHARS = 200_000;

export class PostMessageRequest {
  @ApiProperty({ minLength: 1, maxLength: MAX_MESSAGE_CHARS, example: 'What is the weather in Paris?' })
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_MESSAGE_CHARS)
  @Matches(/\S/, { message: 'content must not be blank' })
  content!: string;
}

export class MessageAdmissionBody {
  @ApiProperty({ format: 'uuid' })
  messageId!: string;

  @ApiProperty({ format: 'uuid', description: 'The Turn that answers this input' })
  turnId!: string;

  @ApiProperty({ format: 'uuid', description: "The Turn's execution; follow it at /v1/executions/{id}/events" })
  executionId!: string;

  @ApiProperty({
    enum: ['started', 'queued', 'steered'],
    description:
      '`started`: a new Turn runs now. `queued`: a new Turn waits (execution state `queued`) behind the running one. ' +
      '`steered`: the input joined the running Turn of the same caller and is read at its next model step.',
  })
  admission!: MessageAdmission['admission'];
}

export class MessageBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: ['user', 'assistant', 'tool'] })
  role!: MessageView['role'];

  @ApiProperty()
  content!: string;

  @ApiProperty({ format: 'uuid' })
  turnId!: string;

  @ApiProperty({
    enum: ['task', 'reminder'],
    nullable: true,
    type: String,
    description: "Who wrote a user-side message that is not its caller's input: `task` (a detached task's notice: history, it starts no Turn) or `reminder`; null otherwise",
  })
  author!: MessageView['author'];

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class MessagePage {
  @ApiProperty({ type: [MessageBody] })
  data!: MessageBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export function toMessageBody(message: MessageView): MessageBody {
  return {
    id: message.id,
    role: message.role,
    content: message.content,
    turnId: message.turnId,
    author: message.author,
    createdAt: new Date(message.createdAt).toISOString(),
  };
}

export class PostToolOutputRequest {
  @ApiProperty({ maxLength: 200, description: 'The `callId` of the `tool.called` event' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  callId!: string;

  @ApiProperty({ maxLength: 200_000, description: 'What the model reads as the tool result (its `modelOutput`)' })
  @IsString()
  @MaxLength(200_000)
  output!: string;

  @ApiPropertyOptional({ description: 'The tool failed; the model is told so' })
  @IsOptional()
  @IsBoolean()
  isError?: boolean;
}

export class ToolOutputAcceptedBody {
  @ApiProperty({ format: 'uuid' })
  turnId!: string;

  @ApiProperty({ format: 'uuid' })
  executionId!: string;
}

export class ChatStopBody {
  @ApiProperty({ type: [String], description: 'The executions of the Turns that were asked to cancel' })
  executionIds!: string[];
}

export class ChatDeleteBody {
  @ApiProperty({ format: 'uuid', description: 'The `chat.delete` execution: it ends once every Turn released and the Chat is gone' })
  executionId!: string;
}

import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { MessageAdmission, MessageView } from '@openbot/features';
import { ArrayMaxSize, IsArray, IsBoolean, IsOptional, IsString, MaxLength, MinLength, ValidateBy } from 'class-validator';

export const MAX_MESSAGE_CHARS = 200_000;
const MAX_MESSAGE_FILES = 10;

const hasFiles = (object: object): boolean => {
  const fileIds = (object as { fileIds?: unknown }).fileIds;
  return Array.isArray(fileIds) && fileIds.length > 0;
};

/** `content` must have a visible character, unless the message carries files. */
const NotBlankWithoutFiles = () =>
  ValidateBy({
    name: 'notBlankWithoutFiles',
    validator: {
      validate: (value: unknown, args) => typeof value === 'string' && (/\S/.test(value) || hasFiles(args?.object ?? {})),
      defaultMessage: () => 'content must not be blank (it may be empty when fileIds is not)',
    },
  });

export class PostMessageRequest {
  @ApiProperty({ maxLength: MAX_MESSAGE_CHARS, example: 'What is the weather in Paris?', description: 'The message; may be empty when `fileIds` is not' })
  @IsString()
  @MaxLength(MAX_MESSAGE_CHARS)
  @NotBlankWithoutFiles()
  content!: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_MESSAGE_FILES,
    description:
      'Files (`POST /v1/files`) the model receives with the message, as its provider supports them: text, image or PDF parts. ' +
      "A file of another organization, an unknown one, or one the Bot's provider cannot take is 400 InvalidInput on `fileIds.N`. " +
      'A file deleted later reaches later Turns as a short text that says so.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_MESSAGE_FILES)
  @IsString({ each: true })
  fileIds?: string[];
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
      '`steered`: the input joined the running Turn of the same caller and is read at its next model step. ' +
      'A Turn that makes no more model calls (its final answer came, or its last step began) takes no steering: the input then `queued` with its own IDs.',
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

  @ApiProperty({
    type: [String],
    description: "The files the message carries to the model: a user message's `fileIds`, or the files a tool result handed the model. A file deleted since stays listed.",
  })
  fileIds!: string[];

  @ApiProperty({ format: 'uuid' })
  turnId!: string;

  @ApiProperty({
    enum: ['task', 'reminder'],
    nullable: true,
    type: String,
    description: "Who wrote a user-side message that is not its caller's input: `task` (a detached task's notice: history, it starts no Turn) or `reminder`; null otherwise",
  })
  author!: MessageView['author'];

  @ApiProperty({
    enum: ['max-steps', 'max-seconds', 'max-output-tokens', 'max-cost', 'budget'],
    nullable: true,
    type: String,
    description:
      "On the last assistant message of a Turn a limit stopped: that limit (as the execution's `stop`). The message is the Turn's partial reply " +
      '(empty when it said nothing after its tool calls) and later Turns read it as history; null on every other message',
  })
  stop!: MessageView['stop'];

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
    fileIds: [...message.fileIds],
    turnId: message.turnId,
    author: message.author,
    stop: message.stop,
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

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_MESSAGE_FILES,
    description: "Files the output hands the model beside its text (STC-09), as the Bot's provider supports them; 400 InvalidInput on `fileIds.N` for an unknown file",
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_MESSAGE_FILES)
  @IsString({ each: true })
  fileIds?: string[];
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

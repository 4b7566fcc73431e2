import { Controller, Get, Inject, Query } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiQuery, ApiTags } from '@nestjs/swagger';
import { InvalidInput, parsePageRequest, type MemberCaller } from '@openbot/domain';
import { ListUsage, type UsageRecordView } from '@openbot/openbot';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../shared-page';

class BilledToBody {
  @ApiProperty({ enum: ['member', 'service'] })
  kind!: string;

  @ApiProperty({ format: 'uuid' })
  id!: string;
}

export class UsageRecordBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid', description: 'The model call (one record per call: a duplicate result never charges twice)' })
  callId!: string;

  @ApiProperty({ format: 'uuid' })
  executionId!: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  botId!: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  chatId!: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  turnId!: string | null;

  @ApiProperty({ example: 'local/gpt-test' })
  model!: string;

  @ApiProperty({ enum: ['confirmed', 'unknown'], description: '`unknown`: the provider reported no usage; the counts are null, never 0' })
  status!: string;

  @ApiProperty({ type: Number, nullable: true })
  inputTokens!: number | null;

  @ApiProperty({ type: Number, nullable: true })
  outputTokens!: number | null;

  @ApiProperty({ type: Number, nullable: true, description: "The request's own token estimate, kept apart from confirmed counts" })
  estimatedInputTokens!: number | null;

  @ApiProperty({ type: BilledToBody, description: 'The billing identity of the call' })
  billedTo!: BilledToBody;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class UsagePage {
  @ApiProperty({ type: [UsageRecordBody] })
  data!: UsageRecordBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

function toUsageBody(record: UsageRecordView): UsageRecordBody {
  return {
    id: record.id,
    callId: record.callId,
    executionId: record.executionId,
    botId: record.botId,
    chatId: record.chatId,
    turnId: record.turnId,
    model: record.model,
    status: record.status,
    inputTokens: record.inputTokens,
    outputTokens: record.outputTokens,
    estimatedInputTokens: record.estimatedInputTokens,
    billedTo: { kind: record.billedTo.kind, id: record.billedTo.id },
    createdAt: new Date(record.createdAt).toISOString(),
  };
}

const optionalId = (name: string, value: unknown): string | null => {
  if (value === undefined || value === '') return null;
  if (typeof value !== 'string') throw new InvalidInput([{ path: name, message: `${name} must be a UUID` }]);
  return value;
};

@ApiTags('usage')
@ApiBearerAuth()
@Access('member')
@Controller('v1/usage')
export class UsageController {
  constructor(@Inject(QueryBus) private readonly queries: QueryBus) {}

  @Get()
  @Requires('usage.read')
  @ApiOperation({ summary: "List the organization's model usage records, oldest first, optionally of one Bot or Chat" })
  @ApiPageQuery()
  @ApiQuery({ name: 'botId', required: false, schema: { type: 'string', format: 'uuid' } })
  @ApiQuery({ name: 'chatId', required: false, schema: { type: 'string', format: 'uuid' } })
  @ApiOkResponse({ type: UsagePage })
  @ApiErrors(400, 401, 403)
  async list(
    @CurrentMember() caller: MemberCaller,
    @Query('after') after?: string,
    @Query('limit') limit?: string,
    @Query('botId') botId?: unknown,
    @Query('chatId') chatId?: unknown,
  ): Promise<UsagePage> {
    const page = await this.queries.execute(
      new ListUsage(caller, parsePageRequest(after, limit), { botId: optionalId('botId', botId), chatId: optionalId('chatId', chatId) }),
    );
    return { data: page.data.map(toUsageBody), next: page.next };
  }
}

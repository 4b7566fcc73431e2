import { Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiQuery, ApiTags } from '@nestjs/swagger';
import { InvalidInput, parsePageRequest, type MemberCaller } from '@openbot/domain';
import { ListUsage, ReleaseUsage, USAGE_GROUPS, UsageSummary, type UsageGroup, type UsageRecordView } from '@openbot/platform';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../openapi/page-query';

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

  @ApiProperty({ type: Number, nullable: true, description: 'The part of `inputTokens` read from a cache; null when not reported' })
  cachedInputTokens!: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Micros, computed once at the price in force when the call started; null while the usage is unknown, unless an owner released it: then its reservation, charged',
  })
  costMicros!: number | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The price version the call was charged at; null: no price, the call cost 0' })
  priceId!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When an owner or admin released this unknown record, charging what it kept reserved' })
  releasedAt!: string | null;

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

export class UsageSummaryRowBody {
  @ApiProperty({ description: 'The model, Bot ID, member ID (`service:<id>` for service-billed calls) or UTC day `YYYY-MM-DD`' })
  key!: string;

  @ApiProperty()
  calls!: number;

  @ApiProperty()
  inputTokens!: number;

  @ApiProperty()
  outputTokens!: number;

  @ApiProperty({ description: 'The sum of known costs in micros' })
  costMicros!: number;

  @ApiProperty({ description: 'Calls whose usage is unknown (their cost is not in costMicros, unless released: then their charged reservation is)' })
  unknownCalls!: number;
}

export class UsageSummaryBody {
  @ApiProperty({ type: [UsageSummaryRowBody] })
  data!: UsageSummaryRowBody[];
}

export class UsageReleasedBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'date-time' })
  releasedAt!: string;

  @ApiProperty({ description: 'What the release charged, in micros: the reservation the record kept, now its cost (posted as a credits charge when the organization has credits)' })
  costMicros!: number;
}

const DAY_MS = 86_400_000;

function timeParam(name: string, value: unknown, fallback: Date): Date {
  if (value === undefined || value === '') return fallback;
  const time = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value) ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(time.getTime())) throw new InvalidInput([{ path: name, message: `${name} must be an ISO 8601 time` }]);
  return time;
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
    cachedInputTokens: record.cachedInputTokens,
    costMicros: record.costMicros,
    priceId: record.priceId,
    releasedAt: record.releasedAt === null ? null : new Date(record.releasedAt).toISOString(),
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
  constructor(
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(CommandBus) private readonly commands: CommandBus,
  ) {}

  @Get('summary')
  @Requires('usage.read')
  @ApiOperation({
    summary: "The organization's usage in [from, to), grouped by model, Bot, member or UTC day (not paged)",
    description: 'By default the last 30 days. `costMicros` sums known costs; `unknownCalls` counts calls whose usage the provider never reported.',
  })
  @ApiQuery({ name: 'from', required: false, schema: { type: 'string', format: 'date-time' }, description: 'Inclusive' })
  @ApiQuery({ name: 'to', required: false, schema: { type: 'string', format: 'date-time' }, description: 'Exclusive' })
  @ApiQuery({ name: 'groupBy', required: false, schema: { type: 'string', enum: [...USAGE_GROUPS], default: 'model' } })
  @ApiOkResponse({ type: UsageSummaryBody })
  @ApiErrors(400, 401, 403)
  async summary(
    @CurrentMember() caller: MemberCaller,
    @Query('from') from?: unknown,
    @Query('to') to?: unknown,
    @Query('groupBy') groupBy?: unknown,
  ): Promise<UsageSummaryBody> {
    const group = groupBy === undefined || groupBy === '' ? 'model' : groupBy;
    if (typeof group !== 'string' || !(USAGE_GROUPS as readonly string[]).includes(group)) {
      throw new InvalidInput([{ path: 'groupBy', message: `groupBy must be one of ${USAGE_GROUPS.join(', ')}` }]);
    }
    const end = timeParam('to', to, new Date());
    const start = timeParam('from', from, new Date(end.getTime() - 30 * DAY_MS));
    const result = await this.queries.execute(new UsageSummary(caller, group as UsageGroup, start, end));
    return { data: [...result.data] };
  }

  @Post(':id/release')
  @Requires('billing.manage')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Settle an unknown usage record at its reservation (owners and admins)',
    description:
      'Its provider will never report: the reservation it keeps on budgets and credits is charged instead (its `costMicros`, and a credits charge ' +
      'when the organization has credits), so releasing never makes a call free. The record stays unknown with its estimate; a late result still ' +
      'fills in its tokens once, but its cost stays what was charged. Releasing again answers the same; a confirmed record answers 409 UsageSettled. ' +
      'Recorded in the audit log (`usage.released`).',
  })
  @ApiOkResponse({ type: UsageReleasedBody })
  @ApiErrors(401, 403, 404, 409)
  async release(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<UsageReleasedBody> {
    const released = await this.commands.execute(new ReleaseUsage(caller, id));
    return { id: released.id, releasedAt: released.releasedAt.toISOString(), costMicros: released.costMicros };
  }

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

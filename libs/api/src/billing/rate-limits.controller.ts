import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type MemberCaller } from '@openbot/domain';
import { CreateRateLimit, DeleteRateLimit, GetRateLimit, ListRateLimits } from '@openbot/platform';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../openapi/page-query';
import { CreateRateLimitRequest, RateLimitBody, RateLimitPage, toRateLimitBody } from './billing.dto';

@ApiTags('billing')
@ApiBearerAuth()
@Access('member')
@Controller('v1/rate-limits')
export class RateLimitsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post()
  @Requires('billing.manage')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a rate limit of the organization, a Bot or a member',
    description:
      'Model calls and/or tokens per minute, held across all nodes by database token buckets. A message finding no call left answers 429 ' +
      'RateLimited with Retry-After; mid-Turn, a model call waits durably for its bucket.',
  })
  @ApiCreatedResponse({ type: RateLimitBody })
  @ApiErrors(400, 401, 403)
  async create(@CurrentMember() caller: MemberCaller, @Body() body: CreateRateLimitRequest): Promise<RateLimitBody> {
    const limit = await this.commands.execute(
      new CreateRateLimit(caller, {
        scope: { kind: body.scope.kind, id: body.scope.id ?? null },
        requestsPerMinute: body.requestsPerMinute ?? null,
        tokensPerMinute: body.tokensPerMinute ?? null,
      }),
    );
    return toRateLimitBody(limit);
  }

  @Get()
  @Requires('usage.read')
  @ApiOperation({ summary: "List the organization's rate limits, oldest first" })
  @ApiPageQuery()
  @ApiOkResponse({ type: RateLimitPage })
  @ApiErrors(400, 401, 403)
  async list(@CurrentMember() caller: MemberCaller, @Query('after') after?: string, @Query('limit') limit?: string): Promise<RateLimitPage> {
    const page = await this.queries.execute(new ListRateLimits(caller, parsePageRequest(after, limit)));
    return { data: page.data.map(toRateLimitBody), next: page.next };
  }

  @Get(':id')
  @Requires('usage.read')
  @ApiOperation({ summary: 'Read one rate limit' })
  @ApiOkResponse({ type: RateLimitBody })
  @ApiErrors(401, 403, 404)
  async get(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<RateLimitBody> {
    return toRateLimitBody(await this.queries.execute(new GetRateLimit(caller, id)));
  }

  @Delete(':id')
  @Requires('billing.manage')
  @ApiOperation({ summary: 'Delete a rate limit' })
  @ApiOkResponse({ type: RateLimitBody })
  @ApiErrors(401, 403, 404)
  async delete(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<RateLimitBody> {
    return toRateLimitBody(await this.commands.execute(new DeleteRateLimit(caller, id)));
  }
}

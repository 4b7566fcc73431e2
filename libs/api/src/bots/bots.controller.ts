import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type MemberCaller } from '@openbot/domain';
import { CreateBot, DeleteBot, GetBot, ListBots, UpdateBot } from '@openbot/features';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../openapi/page-query';
import { BotBody, BotPage, CreateBotRequest, toBotBody, toBotLimits, toBotMemory, toBotTools, UpdateBotRequest } from './bot.dto';

@ApiTags('bots')
@ApiBearerAuth()
@Access('member')
@Controller('v1/bots')
export class BotsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post()
  @Requires('bots.write')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a Bot in the organization',
    description:
      'The model is `<provider name>/<model id>` and its provider must be one of the organization\'s model providers (400 on `model`). ' +
      '`http` and `background` tools need a `url`; `client` tools (the default) have neither `url` nor `retry` (400 on `tools.<n>.url`).',
  })
  @ApiCreatedResponse({ type: BotBody })
  @ApiErrors(400, 401, 403)
  async create(@CurrentMember() caller: MemberCaller, @Body() body: CreateBotRequest): Promise<BotBody> {
    const bot = await this.commands.execute(
      new CreateBot(caller, body.name.trim(), body.model, body.instructions ?? '', toBotTools(body.tools ?? []), toBotLimits(body.limits ?? {}), body.memory === undefined ? undefined : toBotMemory(body.memory)),
    );
    return toBotBody(bot);
  }

  @Get()
  @Requires('bots.read')
  @ApiOperation({ summary: 'List the Bots of the organization, oldest first' })
  @ApiPageQuery()
  @ApiOkResponse({ type: BotPage })
  @ApiErrors(400, 401, 403)
  async list(@CurrentMember() caller: MemberCaller, @Query('after') after?: string, @Query('limit') limit?: string): Promise<BotPage> {
    const page = await this.queries.execute(new ListBots(caller, parsePageRequest(after, limit)));
    return { data: page.data.map(toBotBody), next: page.next };
  }

  @Get(':id')
  @Requires('bots.read')
  @ApiOperation({ summary: 'Read one Bot' })
  @ApiOkResponse({ type: BotBody })
  @ApiErrors(401, 403, 404)
  async get(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<BotBody> {
    return toBotBody(await this.queries.execute(new GetBot(caller, id)));
  }

  @Patch(':id')
  @Requires('bots.write')
  @ApiOperation({
    summary: 'Change some fields of a Bot; absent fields keep their value, `tools` and `limits` replace the whole set',
    description:
      'A literal header sent back as `null` keeps its saved value only while the tool keeps its kind and URL origin: moving a tool to another ' +
      'scheme, host or port, or to another kind, without giving the value again is 400 on `tools.<n>.headers.<name>`.',
  })
  @ApiOkResponse({ type: BotBody })
  @ApiErrors(400, 401, 403, 404)
  async update(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Body() body: UpdateBotRequest): Promise<BotBody> {
    const bot = await this.commands.execute(
      new UpdateBot(caller, id, {
        ...(body.name === undefined ? {} : { name: body.name.trim() }),
        ...(body.model === undefined ? {} : { model: body.model }),
        ...(body.instructions === undefined ? {} : { instructions: body.instructions }),
        ...(body.tools === undefined ? {} : { tools: toBotTools(body.tools) }),
        ...(body.limits === undefined ? {} : { limits: toBotLimits(body.limits) }),
        ...(body.memory === undefined ? {} : { memory: toBotMemory(body.memory) }),
      }),
    );
    return toBotBody(bot);
  }

  @Delete(':id')
  @Requires('bots.write')
  @ApiOperation({ summary: 'Delete a Bot; answers 200 with the deleted Bot', description: 'A Bot that has Chats is kept: 409 BotHasChats.' })
  @ApiOkResponse({ type: BotBody })
  @ApiErrors(401, 403, 404, 409)
  async delete(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<BotBody> {
    return toBotBody(await this.commands.execute(new DeleteBot(caller, id)));
  }
}

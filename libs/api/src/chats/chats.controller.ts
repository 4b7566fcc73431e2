import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { InvalidInput, parsePageRequest, type MemberCaller } from '@openbot/domain';
import { CreateChat, GetChat, ListChats } from '@openbot/features';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../openapi/page-query';
import { ChatBody, ChatPage, CreateChatRequest, toChatBody } from './chat.dto';

@ApiTags('chats')
@ApiBearerAuth()
@Access('member')
@Controller('v1/chats')
export class ChatsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post()
  @Requires('chats.write')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a Chat with a Bot of the organization',
    description: 'An unknown Bot and another organization\'s Bot both answer 404 BotNotFound.',
  })
  @ApiCreatedResponse({ type: ChatBody })
  @ApiErrors(400, 401, 403, 404)
  async create(@CurrentMember() caller: MemberCaller, @Body() body: CreateChatRequest): Promise<ChatBody> {
    return toChatBody(await this.commands.execute(new CreateChat(caller, body.botId)));
  }

  @Get()
  @Requires('chats.read')
  @ApiOperation({ summary: 'List the Chats of the organization, oldest first, optionally of one Bot' })
  @ApiPageQuery()
  @ApiQuery({ name: 'botId', required: false, schema: { type: 'string', format: 'uuid' }, description: 'Only the Chats of this Bot' })
  @ApiOkResponse({ type: ChatPage })
  @ApiErrors(400, 401, 403)
  async list(
    @CurrentMember() caller: MemberCaller,
    @Query('after') after?: string,
    @Query('limit') limit?: string,
    @Query('botId') botId?: unknown,
  ): Promise<ChatPage> {
    const page = parsePageRequest(after, limit);
    if (botId !== undefined && typeof botId !== 'string') throw new InvalidInput([{ path: 'botId', message: 'botId must be a UUID' }]);
    const chats = await this.queries.execute(new ListChats(caller, page, botId === undefined || botId === '' ? null : botId));
    return { data: chats.data.map(toChatBody), next: chats.next };
  }

  @Get(':id')
  @Requires('chats.read')
  @ApiOperation({ summary: 'Read one Chat' })
  @ApiOkResponse({ type: ChatBody })
  @ApiErrors(401, 403, 404)
  async get(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ChatBody> {
    return toChatBody(await this.queries.execute(new GetChat(caller, id)));
  }
}

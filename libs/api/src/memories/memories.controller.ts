import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type MemberCaller } from '@openbot/domain';
import { CreateMemoryItem, DeleteMemoryItem, GetMemoryItem, ListMemoryItems, UpdateMemoryItem } from '@openbot/features';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors, ApiLimitReached } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../openapi/page-query';
import {
  CreateMemoryRequest,
  MemoryBody,
  MemoryPage,
  MemoryWithContentBody,
  toMemoryAccess,
  toMemoryBody,
  toMemorySources,
  toMemoryWithContentBody,
  UpdateMemoryRequest,
} from './memory.dto';

/** The query's `tag` values: absent, one, or repeated. */
function tagList(tag: string | string[] | undefined): string[] {
  if (tag === undefined) return [];
  return Array.isArray(tag) ? tag : [tag];
}

@ApiTags('memories')
@ApiBearerAuth()
@Access('member')
// `:id` is the Bot: Fastify's router needs the same parameter name as `/v1/bots/:id` at this position.
@Controller('v1/bots/:id/memories')
export class MemoriesController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post()
  @Requires('bots.write')
  @HttpCode(201)
  @ApiOperation({
    summary: "Add an item to a Bot's memory",
    description:
      'The content is sealed at rest; search sees only keyed hashes of its words. `access` says whose Turns may select it (default: every Turn of the Bot); ' +
      'an item whose `sources` a reader can no longer see is not selected for them. Another organization\'s Bot is 404.',
  })
  @ApiCreatedResponse({ type: MemoryBody })
  @ApiErrors(400, 401, 403, 404)
  @ApiLimitReached('memoryItems')
  async create(@CurrentMember() caller: MemberCaller, @Param('id') botId: string, @Body() body: CreateMemoryRequest): Promise<MemoryBody> {
    const item = await this.commands.execute(new CreateMemoryItem(caller, botId, body.content, body.tags ?? [], toMemoryAccess(body.access), toMemorySources(body.sources)));
    return toMemoryBody(item);
  }

  @Get()
  @Requires('bots.read')
  @ApiOperation({
    summary: "A page of a Bot's memory items, without content",
    description:
      'Oldest first, only the items whose `access` admits the caller (owners and admins: every item); the rule is part of the query, so neither the page nor `q` says anything of an item it excludes. ' +
      '`tag` may repeat: an item has every tag named. `q` matches whole words of the content (every word of `q`), through the keyed word index.',
  })
  @ApiPageQuery()
  @ApiQuery({ name: 'tag', required: false, type: [String] })
  @ApiQuery({ name: 'q', required: false, type: String })
  @ApiOkResponse({ type: MemoryPage })
  @ApiErrors(400, 401, 403, 404)
  async list(
    @CurrentMember() caller: MemberCaller,
    @Param('id') botId: string,
    @Query('tag') tag?: string | string[],
    @Query('q') q?: string,
    @Query('after') after?: string,
    @Query('limit') limit?: string,
  ): Promise<MemoryPage> {
    const page = await this.queries.execute(new ListMemoryItems(caller, botId, { tags: tagList(tag), q: q === undefined || q === '' ? null : q }, parsePageRequest(after, limit)));
    return { data: page.data.map(toMemoryBody), next: page.next };
  }

  @Get(':memoryId')
  @Requires('bots.read')
  @ApiOperation({
    summary: 'One memory item with its content',
    description: 'Only members its access rule admits, and owners and admins, find the item: for anyone else it is 404, as an unknown ID.',
  })
  @ApiOkResponse({ type: MemoryWithContentBody })
  @ApiErrors(401, 403, 404)
  async get(@CurrentMember() caller: MemberCaller, @Param('id') botId: string, @Param('memoryId') id: string): Promise<MemoryWithContentBody> {
    return toMemoryWithContentBody(await this.queries.execute(new GetMemoryItem(caller, botId, id)));
  }

  @Patch(':memoryId')
  @Requires('bots.write')
  @ApiOperation({
    summary: "Change a memory item's tags or status",
    description: 'The sealed content stays byte-identical. Answers the item without content. An item whose access rule excludes the caller (not an owner or admin) is 404.',
  })
  @ApiOkResponse({ type: MemoryBody })
  @ApiErrors(400, 401, 403, 404)
  async update(@CurrentMember() caller: MemberCaller, @Param('id') botId: string, @Param('memoryId') id: string, @Body() body: UpdateMemoryRequest): Promise<MemoryBody> {
    const item = await this.commands.execute(
      new UpdateMemoryItem(caller, botId, id, { ...(body.tags === undefined ? {} : { tags: body.tags }), ...(body.status === undefined ? {} : { status: body.status }) }),
    );
    return toMemoryBody(item);
  }

  @Delete(':memoryId')
  @Requires('bots.write')
  @ApiOperation({ summary: 'Delete a memory item; answers 200 with it, without content', description: 'An item whose access rule excludes the caller (not an owner or admin) is 404.' })
  @ApiOkResponse({ type: MemoryBody })
  @ApiErrors(401, 403, 404)
  async remove(@CurrentMember() caller: MemberCaller, @Param('id') botId: string, @Param('memoryId') id: string): Promise<MemoryBody> {
    return toMemoryBody(await this.commands.execute(new DeleteMemoryItem(caller, botId, id)));
  }
}

import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type MemberCaller } from '@openbot/domain';
import { CreateModelProvider, DeleteModelProvider, GetModelProvider, ListModelProviders } from '@openbot/platform';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ModelProviderInUseBody } from '../errors/error-bodies';
import { ApiPageQuery } from '../openapi/page-query';
import { CreateModelProviderRequest, ModelProviderBody, ModelProviderPage, toModelProviderBody } from './model-provider.dto';

@ApiTags('model-providers')
@ApiBearerAuth()
@Access('member')
@Controller('v1/model-providers')
export class ModelProvidersController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post()
  @Requires('models.write')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Register a model provider for the organization; its API key is stored sealed and never returned',
    description: 'The name is unique in the organization (409 ModelProviderNameTaken). The baseUrl must pass the egress policy.',
  })
  @ApiCreatedResponse({ type: ModelProviderBody })
  @ApiErrors(400, 401, 403, 409)
  async create(@CurrentMember() caller: MemberCaller, @Body() body: CreateModelProviderRequest): Promise<ModelProviderBody> {
    const provider = await this.commands.execute(
      new CreateModelProvider(caller, body.name.trim(), body.kind, body.baseUrl.trim(), body.apiKey ?? null),
    );
    return toModelProviderBody(provider);
  }

  @Get()
  @Requires('models.read')
  @ApiOperation({ summary: 'List the model providers of the organization, oldest first' })
  @ApiPageQuery()
  @ApiOkResponse({ type: ModelProviderPage })
  @ApiErrors(400, 401, 403)
  async list(
    @CurrentMember() caller: MemberCaller,
    @Query('after') after?: string,
    @Query('limit') limit?: string,
  ): Promise<ModelProviderPage> {
    const page = await this.queries.execute(new ListModelProviders(caller, parsePageRequest(after, limit)));
    return { data: page.data.map(toModelProviderBody), next: page.next };
  }

  @Get(':id')
  @Requires('models.read')
  @ApiOperation({ summary: 'Read one model provider' })
  @ApiOkResponse({ type: ModelProviderBody })
  @ApiErrors(401, 403, 404)
  async get(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ModelProviderBody> {
    return toModelProviderBody(await this.queries.execute(new GetModelProvider(caller, id)));
  }

  @Delete(':id')
  @Requires('models.write')
  @ApiOperation({
    summary: 'Delete a model provider and its sealed API key; answers 200 with the deleted provider',
    description:
      'A provider that a Bot’s model names is not deleted: 409 `ModelProviderInUse` lists those Bots (`bots`, `botCount`). Change their model or delete them first. A Bot created or changed at the same time to name the provider is either in that list or refused with 400 on `model`.',
  })
  @ApiOkResponse({ type: ModelProviderBody })
  @ApiResponse({ status: 409, description: 'ModelProviderInUse: Bots name this provider in their model', type: ModelProviderInUseBody })
  @ApiErrors(401, 403, 404)
  async delete(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ModelProviderBody> {
    return toModelProviderBody(await this.commands.execute(new DeleteModelProvider(caller, id)));
  }
}

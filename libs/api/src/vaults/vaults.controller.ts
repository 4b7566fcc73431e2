import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type MemberCaller } from '@openbot/domain';
import { CreateVault, CreateVaultItem, DeleteVault, DeleteVaultItem, GetVault, GetVaultItem, ListVaultItems, ListVaults, ReplaceVaultItemFields, SetVaultUsers, UpdateVaultItem } from '@openbot/platform';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../openapi/page-query';
import {
  CreateVaultItemRequest,
  CreateVaultRequest,
  ReplaceVaultItemFieldsRequest,
  SetVaultUsersRequest,
  toVaultBody,
  toVaultItemBody,
  toVaultUsersBody,
  UpdateVaultItemRequest,
  VaultBody,
  VaultItemBody,
  VaultItemPage,
  VaultPage,
  VaultReferenceBody,
  VaultUsersBody,
} from './vault.dto';

const CHANGE_RIGHTS = 'Needs `vaults.use` on this Vault (owners and admins hold it on every Vault; members on the Vaults that grant it to them): 403 otherwise.';

@ApiTags('vaults')
// Bots' tool headers and model providers' keys name this schema.
@ApiExtraModels(VaultReferenceBody)
@ApiBearerAuth()
@Access('member')
@Controller('v1/vaults')
export class VaultsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post()
  @Requires('vaults.write')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a Vault',
    description: 'Names are unique in the organization (409 VaultNameTaken). A member who creates a Vault is granted `vaults.use` on it.',
  })
  @ApiCreatedResponse({ type: VaultBody })
  @ApiErrors(400, 401, 403, 409)
  async create(@CurrentMember() caller: MemberCaller, @Body() body: CreateVaultRequest): Promise<VaultBody> {
    return toVaultBody(await this.commands.execute(new CreateVault(caller, body.name.trim())));
  }

  @Get()
  @Requires('vaults.read')
  @ApiOperation({ summary: 'List the Vaults of the organization, oldest first' })
  @ApiPageQuery()
  @ApiOkResponse({ type: VaultPage })
  @ApiErrors(400, 401, 403)
  async list(@CurrentMember() caller: MemberCaller, @Query('after') after?: string, @Query('limit') limit?: string): Promise<VaultPage> {
    const page = await this.queries.execute(new ListVaults(caller, parsePageRequest(after, limit)));
    return { data: page.data.map(toVaultBody), next: page.next };
  }

  @Get(':id')
  @Requires('vaults.read')
  @ApiOperation({ summary: 'Read one Vault' })
  @ApiOkResponse({ type: VaultBody })
  @ApiErrors(401, 403, 404)
  async get(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<VaultBody> {
    return toVaultBody(await this.queries.execute(new GetVault(caller, id)));
  }

  @Delete(':id')
  @Requires('vaults.write')
  @ApiOperation({
    summary: 'Delete a Vault with its items; answers 200 with the deleted Vault',
    description: `${CHANGE_RIGHTS} References to its items fail with category \`forbidden\` at their next send.`,
  })
  @ApiOkResponse({ type: VaultBody })
  @ApiErrors(401, 403, 404)
  async delete(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<VaultBody> {
    return toVaultBody(await this.commands.execute(new DeleteVault(caller, id)));
  }

  @Put(':id/users')
  @Requires('vaults.write')
  @ApiOperation({
    summary: 'Set the members granted `vaults.use` on this Vault',
    description:
      'Owners and admins only, with `vaults.use` in the calling credential: a credential never grants a right it lacks (403 otherwise). ' +
      'Replaces the whole list; an ID that is not a member of the organization is 400 on `memberIds.<n>`. Grants and revocations are audited (`vault.users-changed`).',
  })
  @ApiOkResponse({ type: VaultUsersBody })
  @ApiErrors(400, 401, 403, 404)
  async setUsers(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Body() body: SetVaultUsersRequest): Promise<VaultUsersBody> {
    return toVaultUsersBody(await this.commands.execute(new SetVaultUsers(caller, id, body.memberIds)));
  }

  @Post(':id/items')
  @Requires('vaults.write')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Add an item with named secret fields; the values are stored sealed and never returned',
    description: `${CHANGE_RIGHTS} \`allowedHosts\` is required. Names are unique in the Vault (409 VaultItemNameTaken).`,
  })
  @ApiCreatedResponse({ type: VaultItemBody })
  @ApiErrors(400, 401, 403, 404, 409)
  async createItem(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Body() body: CreateVaultItemRequest): Promise<VaultItemBody> {
    return toVaultItemBody(await this.commands.execute(new CreateVaultItem(caller, id, body.name.trim(), body.fields, body.allowedHosts)));
  }

  @Get(':id/items')
  @Requires('vaults.read')
  @ApiOperation({ summary: 'List the items of a Vault, oldest first: names, field names and hosts, never a value' })
  @ApiPageQuery()
  @ApiOkResponse({ type: VaultItemPage })
  @ApiErrors(400, 401, 403, 404)
  async listItems(
    @CurrentMember() caller: MemberCaller,
    @Param('id') id: string,
    @Query('after') after?: string,
    @Query('limit') limit?: string,
  ): Promise<VaultItemPage> {
    const page = await this.queries.execute(new ListVaultItems(caller, id, parsePageRequest(after, limit)));
    return { data: page.data.map(toVaultItemBody), next: page.next };
  }

  @Get(':id/items/:itemId')
  @Requires('vaults.read')
  @ApiOperation({ summary: 'Read one item, without its values' })
  @ApiOkResponse({ type: VaultItemBody })
  @ApiErrors(401, 403, 404)
  async getItem(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Param('itemId') itemId: string): Promise<VaultItemBody> {
    return toVaultItemBody(await this.queries.execute(new GetVaultItem(caller, id, itemId)));
  }

  @Put(':id/items/:itemId')
  @Requires('vaults.write')
  @ApiOperation({
    summary: 'Replace all the fields of an item at once',
    description: `${CHANGE_RIGHTS} A send in flight uses the fields as they were when it checked them, or the new ones: never a mixture.`,
  })
  @ApiOkResponse({ type: VaultItemBody })
  @ApiErrors(400, 401, 403, 404)
  async replaceFields(
    @CurrentMember() caller: MemberCaller,
    @Param('id') id: string,
    @Param('itemId') itemId: string,
    @Body() body: ReplaceVaultItemFieldsRequest,
  ): Promise<VaultItemBody> {
    return toVaultItemBody(await this.commands.execute(new ReplaceVaultItemFields(caller, id, itemId, body.fields)));
  }

  @Patch(':id/items/:itemId')
  @Requires('vaults.write')
  @ApiOperation({
    summary: 'Rename an item or change its allowed hosts',
    description:
      `${CHANGE_RIGHTS} The ID stays, and so every reference to the item. Keeping or narrowing \`allowedHosts\` is open to every user of the Vault; ` +
      'adding a host the item did not admit (a new name, a wider wildcard, a port beyond the one named) needs owners or admins with `vaults.use` (403 otherwise).',
  })
  @ApiOkResponse({ type: VaultItemBody })
  @ApiErrors(400, 401, 403, 404, 409)
  async updateItem(
    @CurrentMember() caller: MemberCaller,
    @Param('id') id: string,
    @Param('itemId') itemId: string,
    @Body() body: UpdateVaultItemRequest,
  ): Promise<VaultItemBody> {
    const changes = { ...(body.name !== undefined ? { name: body.name.trim() } : {}), ...(body.allowedHosts !== undefined ? { allowedHosts: body.allowedHosts } : {}) };
    return toVaultItemBody(await this.commands.execute(new UpdateVaultItem(caller, id, itemId, changes)));
  }

  @Delete(':id/items/:itemId')
  @Requires('vaults.write')
  @ApiOperation({
    summary: 'Delete an item and its sealed fields; answers 200 with the deleted item',
    description: `${CHANGE_RIGHTS} References to it fail with category \`forbidden\` at their next send; a new item with the same name never replaces them.`,
  })
  @ApiOkResponse({ type: VaultItemBody })
  @ApiErrors(401, 403, 404)
  async deleteItem(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Param('itemId') itemId: string): Promise<VaultItemBody> {
    return toVaultItemBody(await this.commands.execute(new DeleteVaultItem(caller, id, itemId)));
  }
}

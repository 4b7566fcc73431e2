import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type MemberCaller } from '@openbot/domain';
import { CreateApiKey, ListApiKeys, RevokeApiKey } from '@openbot/platform';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors, ApiLimitReached } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../openapi/page-query';
import { ApiKeyBody, ApiKeyPage, CreateApiKeyRequest, CreatedApiKeyBody, toApiKeyBody } from './api-key.dto';

@ApiTags('api-keys')
@ApiBearerAuth()
@Access('member')
@Controller('v1/api-keys')
export class ApiKeysController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post()
  @Requires('api-keys.manage')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create an API key acting as the calling member; the secret is shown once',
    description:
      "The key's rights are at most the calling credential's effective rights (role narrowed by the calling key's scopes). " +
      'Without `scopes`: a session or an unscoped key makes an unscoped key (the member\'s whole role, following later role changes); ' +
      "a scoped key makes a key scoped to its own effective rights. A scope the caller lacks is 400. " +
      'The organization\'s live keys are limited (`GET /v1/limits`, `apiKeys`): past it, 409 LimitReached.',
  })
  @ApiCreatedResponse({ type: CreatedApiKeyBody })
  @ApiErrors(400, 401, 403)
  @ApiLimitReached('apiKeys')
  async create(@CurrentMember() caller: MemberCaller, @Body() body: CreateApiKeyRequest): Promise<CreatedApiKeyBody> {
    const expiresAt = body.expiresAt === undefined ? null : new Date(body.expiresAt);
    const key = await this.commands.execute(new CreateApiKey(caller, body.name.trim(), expiresAt, body.scopes ?? null));
    return { ...toApiKeyBody(key), secret: key.secret };
  }

  @Get()
  @Requires('organization.read')
  @ApiOperation({
    summary: 'List API keys, oldest first',
    description: 'Owners and admins see every key of the organization; members see their own.',
  })
  @ApiPageQuery()
  @ApiOkResponse({ type: ApiKeyPage })
  @ApiErrors(400, 401, 403)
  async list(
    @CurrentMember() caller: MemberCaller,
    @Query('after') after?: string,
    @Query('limit') limit?: string,
  ): Promise<ApiKeyPage> {
    const page = await this.queries.execute(new ListApiKeys(caller, parsePageRequest(after, limit)));
    return { data: page.data.map(toApiKeyBody), next: page.next };
  }

  @Delete(':id')
  @Requires('api-keys.manage')
  @ApiOperation({ summary: 'Revoke an API key at once; revoking a revoked key changes nothing' })
  @ApiOkResponse({ type: ApiKeyBody })
  @ApiErrors(401, 403, 404)
  async revoke(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ApiKeyBody> {
    return toApiKeyBody(await this.commands.execute(new RevokeApiKey(caller, id)));
  }
}

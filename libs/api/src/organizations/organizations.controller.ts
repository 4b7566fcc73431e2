import { Body, Controller, Get, HttpCode, Inject, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type PlatformAdmin } from '@openbot/domain';
import { CreateOrganization, ListOrganizations } from '@openbot/platform';
import { Access, CurrentAdmin } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../openapi/page-query';
import { CreatedOrganizationBody, CreateOrganizationBody, OrganizationPage } from './organization.dto';

@ApiTags('organizations')
@ApiBearerAuth()
@Access('platform')
@Controller('v1/organizations')
export class OrganizationsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create an organization (platform administrator)',
    description: 'Creates the organization, its owner member and the owner’s first API key. The secret is shown once.',
  })
  @ApiCreatedResponse({ type: CreatedOrganizationBody })
  @ApiErrors(400, 401, 403)
  async create(@Body() body: CreateOrganizationBody): Promise<CreatedOrganizationBody> {
    const created = await this.commands.execute(new CreateOrganization(body.name.trim()));
    return {
      organization: { id: created.organization.id, name: created.organization.name },
      member: { id: created.member.id, role: created.member.role },
      apiKey: { id: created.apiKey.id, secret: created.apiKey.secret },
    };
  }

  @Get()
  @ApiOperation({ summary: 'List organizations (platform administrator), oldest first' })
  @ApiPageQuery()
  @ApiOkResponse({ type: OrganizationPage })
  @ApiErrors(400, 401, 403)
  async list(
    @CurrentAdmin() admin: PlatformAdmin,
    @Query('after') after?: string,
    @Query('limit') limit?: string,
  ): Promise<OrganizationPage> {
    const page = await this.queries.execute(new ListOrganizations(admin, parsePageRequest(after, limit)));
    return {
      data: page.data.map((o) => ({ id: o.id, name: o.name, createdAt: o.createdAt.toISOString() })),
      next: page.next,
    };
  }
}

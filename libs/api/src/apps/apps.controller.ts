import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiAcceptedResponse, ApiBearerAuth, ApiCreatedResponse, ApiExtraModels, ApiOkResponse, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type MemberCaller } from '@openbot/domain';
import { CheckConnection, CreateConnection, DeleteApp, DeleteConnection, GetApp, GetConnection, GetToolView, ListApps, ListConnections, ListConnectionTools, RegisterApp } from '@openbot/features';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { AppExistsBody } from '../errors/error-bodies';
import { ApiPageQuery } from '../openapi/page-query';
import {
  AppBody,
  AppPage,
  ConnectionBody,
  ConnectionPage,
  ConnectionToolPage,
  CreateConnectionRequest,
  CreatedConnectionBody,
  ExecutionStartedBody,
  givenValues,
  RegisterAppRequest,
  RemoteInputBody,
  toAppBody,
  toConnectionBody,
  ToolViewBody,
} from './app.dto';

@ApiTags('apps')
@ApiBearerAuth()
@Access('member')
@ApiExtraModels(RemoteInputBody)
@Controller('v1/apps')
export class AppsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post()
  @Requires('apps.manage')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Register an App (an MCP server) from its Server Card URL, or a Streamable HTTP endpoint without one',
    description:
      'The URL is read once through the egress policy. A broken card, or a URL that is refused or cannot be reached, is a 400 on `url`. ' +
      'A URL the organization already registered (the same text, after trimming) is 409 `AppExists` with the existing App’s `appId`, and is not read again.',
  })
  @ApiCreatedResponse({ type: AppBody })
  @ApiResponse({ status: 409, description: 'AppExists: this URL is already registered as the App `appId`', type: AppExistsBody })
  @ApiErrors(400, 401, 403)
  async register(@CurrentMember() caller: MemberCaller, @Body() body: RegisterAppRequest): Promise<AppBody> {
    return toAppBody(await this.commands.execute(new RegisterApp(caller, body.url.trim())));
  }

  @Get()
  @Requires('apps.read')
  @ApiOperation({ summary: 'List the Apps of the organization, oldest first' })
  @ApiPageQuery()
  @ApiOkResponse({ type: AppPage })
  @ApiErrors(400, 401, 403)
  async list(@CurrentMember() caller: MemberCaller, @Query('after') after?: string, @Query('limit') limit?: string): Promise<AppPage> {
    const page = await this.queries.execute(new ListApps(caller, parsePageRequest(after, limit)));
    return { data: page.data.map(toAppBody), next: page.next };
  }

  @Get(':id')
  @Requires('apps.read')
  @ApiOperation({ summary: 'Read one App' })
  @ApiOkResponse({ type: AppBody })
  @ApiErrors(401, 403, 404)
  async get(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<AppBody> {
    return toAppBody(await this.queries.execute(new GetApp(caller, id)));
  }

  @Delete(':id')
  @Requires('apps.manage')
  @ApiOperation({ summary: 'Delete an App; 409 AppHasConnections while it has connections' })
  @ApiOkResponse({ type: AppBody })
  @ApiErrors(401, 403, 404, 409)
  async delete(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<AppBody> {
    return toAppBody(await this.commands.execute(new DeleteApp(caller, id)));
  }

  // `:id`, not `:appId`: the router needs one parameter name per path position under /v1/apps.
  @Post(':id/connections')
  @Requires('apps.write')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Set up a connection to one remote of the App (GRANT-06: card refreshed once, remote and values checked, probed, saved as prepared)',
    description:
      'An organization connection (the default) needs apps.manage; `owner: "member"` makes it the caller’s own. Literal header and variable values are stored sealed and answered as null. `state` is what the probe found: `ready`, `needs_authorization` or `failed` (with `category` and `errorId` on the connection).',
  })
  @ApiCreatedResponse({ type: CreatedConnectionBody })
  @ApiErrors(400, 401, 403, 404)
  async connect(@CurrentMember() caller: MemberCaller, @Param('id') appId: string, @Body() body: CreateConnectionRequest): Promise<CreatedConnectionBody> {
    const created = await this.commands.execute(
      new CreateConnection(caller, appId, body.owner ?? 'organization', body.remote ?? null, givenValues('variables', body.variables), givenValues('headers', body.headers)),
    );
    return { id: created.id, appId: created.appId, state: created.state, revision: created.revision };
  }
}

@ApiTags('apps')
@ApiBearerAuth()
@Access('member')
@Controller('v1/connections')
export class ConnectionsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Get()
  @Requires('apps.read')
  @ApiOperation({ summary: 'List the connections the caller may see: the organization’s, and member connections (its own; all of them for owners and admins)' })
  @ApiPageQuery()
  @ApiQuery({ name: 'appId', required: false, description: 'Only the connections of this App' })
  @ApiOkResponse({ type: ConnectionPage })
  @ApiErrors(400, 401, 403)
  async list(@CurrentMember() caller: MemberCaller, @Query('after') after?: string, @Query('limit') limit?: string, @Query('appId') appId?: string): Promise<ConnectionPage> {
    const page = await this.queries.execute(new ListConnections(caller, parsePageRequest(after, limit), appId ?? null));
    return { data: page.data.map(toConnectionBody), next: page.next };
  }

  @Get(':id')
  @Requires('apps.read')
  @ApiOperation({ summary: 'Read one connection (literal values are never shown)' })
  @ApiOkResponse({ type: ConnectionBody })
  @ApiErrors(401, 403, 404)
  async get(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ConnectionBody> {
    return toConnectionBody(await this.queries.execute(new GetConnection(caller, id)));
  }

  @Get(':id/tools')
  @Requires('apps.read')
  @ApiOperation({
    summary: 'Full discovery: the tools of the connection’s server, cached per connection and revision',
    description: 'The first read of a revision lists the server’s tools; tools whose schema is not a JSON Schema object are left out (see the connection’s `warnings`). 503 when the server cannot be listed.',
  })
  @ApiPageQuery()
  @ApiOkResponse({ type: ConnectionToolPage })
  @ApiErrors(400, 401, 403, 404)
  async tools(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Query('after') after?: string, @Query('limit') limit?: string): Promise<ConnectionToolPage> {
    const page = await this.queries.execute(new ListConnectionTools(caller, id, after, limit));
    return { data: page.data.map((t) => ({ ...t, annotations: { ...t.annotations } as Record<string, boolean> })), next: page.next };
  }

  @Get(':id/tools/:name/view')
  @Requires('apps.read')
  @ApiOperation({
    summary: 'The View of one tool (MCP Apps `ui://` resource): its HTML, the CSP domains and permissions it asks for',
    description: 'Read from the server when asked; render it in a sandboxed frame with at most the CSP it names. 404 ViewNotFound when the tool has none.',
  })
  @ApiOkResponse({ type: ToolViewBody })
  @ApiErrors(401, 403, 404)
  async view(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Param('name') name: string): Promise<ToolViewBody> {
    const view = await this.queries.execute(new GetToolView(caller, id, name));
    return { toolName: view.toolName, uri: view.uri, mimeType: view.mimeType, html: view.html, csp: { ...view.csp }, permissions: { ...view.permissions }, domain: view.domain };
  }

  @Post(':id/check')
  @Requires('apps.write')
  @HttpCode(202)
  @ApiOperation({ summary: 'Revalidate the connection (CONN-01): an execution probes it and lists its tools; its `state` and `revision` show the outcome' })
  @ApiAcceptedResponse({ type: ExecutionStartedBody })
  @ApiErrors(401, 403, 404)
  async check(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ExecutionStartedBody> {
    return this.commands.execute(new CheckConnection(caller, id));
  }

  @Delete(':id')
  @Requires('apps.write')
  @HttpCode(202)
  @ApiOperation({ summary: 'Delete the connection: it answers 404 from now on, and a cleanup execution closes its sessions (RES-07)' })
  @ApiAcceptedResponse({ type: ExecutionStartedBody })
  @ApiErrors(401, 403, 404)
  async delete(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ExecutionStartedBody> {
    return this.commands.execute(new DeleteConnection(caller, id));
  }
}

import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiAcceptedResponse, ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { MemberCaller } from '@openbot/domain';
import { CallViewTool, GetView, GetViewCall, OpenView } from '@openbot/features';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ExecutionStartedBody } from './app.dto';
import { OpenedViewBody, ViewBody, ViewCallBody, ViewCallRequest } from './views.dto';

/** Views (MCP Apps `ui://` resources) and the tool calls made from them. */
@ApiTags('apps')
@ApiBearerAuth()
@Access('member')
@Controller('v1')
export class ViewsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post('connections/:id/tools/:name/views')
  @Requires('apps.write')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Open the View of one tool: its HTML, CSP and permissions, and a stored View binding for its tool calls',
    description:
      'The binding keeps the declarations of the connection’s tools at the current revision; a call from the View sends those, checked like a model’s call. It stays valid across restarts and on every node, and goes with its connection. Only the member who opened it may use it. 404 ViewNotFound when the tool has none.',
  })
  @ApiCreatedResponse({ type: OpenedViewBody })
  @ApiErrors(401, 403, 404)
  async open(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Param('name') name: string): Promise<OpenedViewBody> {
    const view = await this.commands.execute(new OpenView(caller, id, name));
    return {
      id: view.id,
      connectionId: view.connectionId,
      toolName: view.toolName,
      revision: view.revision,
      uri: view.uri,
      mimeType: view.mimeType,
      html: view.html,
      csp: { ...view.csp },
      permissions: { ...view.permissions },
      domain: view.domain,
      createdAt: view.createdAt.toISOString(),
    };
  }

  @Get('views/:id')
  @Requires('apps.read')
  @ApiOperation({ summary: 'Read a View binding (only its member sees it)' })
  @ApiOkResponse({ type: ViewBody })
  @ApiErrors(401, 403, 404)
  async get(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ViewBody> {
    const view = await this.queries.execute(new GetView(caller, id));
    return { id: view.id, connectionId: view.connectionId, toolName: view.toolName, uri: view.uri, revision: view.revision, createdAt: view.createdAt.toISOString() };
  }

  @Post('views/:id/calls')
  @Requires('apps.write')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Call a tool from a View: an execution that goes through the checks of a model’s call',
    description:
      'The tool is found by name among the View’s saved declarations and must be callable from a View (MCP Apps visibility `app`); then the connection revision, its member boundary and its Vault rights are checked, and the call is sent once through the call log (a lost answer of an unsafe tool waits in `outcome_unknown`). Read the outcome with `GET /v1/views/{id}/calls/{executionId}`.',
  })
  @ApiAcceptedResponse({ type: ExecutionStartedBody })
  @ApiErrors(400, 401, 403, 404)
  async call(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Body() body: ViewCallRequest): Promise<ExecutionStartedBody> {
    return this.commands.execute(new CallViewTool(caller, id, body.name, body.arguments ?? {}));
  }

  @Get('views/:id/calls/:executionId')
  @Requires('apps.read')
  @ApiOperation({ summary: 'The outcome of one tool call of a View' })
  @ApiOkResponse({ type: ViewCallBody })
  @ApiErrors(401, 403, 404)
  async callOutcome(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Param('executionId') executionId: string): Promise<ViewCallBody> {
    return this.queries.execute(new GetViewCall(caller, id, executionId));
  }
}

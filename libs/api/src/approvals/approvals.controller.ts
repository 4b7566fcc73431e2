import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type MemberCaller } from '@openbot/domain';
import { APPROVAL_STATES, DecideApproval, GetApproval, ListApprovals } from '@openbot/features';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../openapi/page-query';
import { ApprovalBody, ApprovalDecisionRequest, ApprovalPage, toApprovalBody } from './approval.dto';

@ApiTags('approvals')
@ApiBearerAuth()
@Access('member')
@Controller('v1/approvals')
export class ApprovalsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Get()
  @Requires('executions.read')
  @ApiOperation({
    summary: 'The approvals the caller may decide, newest first',
    description:
      "The caller's inbox: tool calls that waited or wait for a decision the caller may make (see the decision route: the Turn's member, owners, admins and the tool's `approvers`, " +
      'never a Turn with rights wider than the caller\'s), filtered in the query. Newest first (descending `id`); `next` continues with older ones. Filters: `state`, `chatId`, `executionId`.',
  })
  @ApiPageQuery()
  @ApiQuery({ name: 'state', required: false, enum: APPROVAL_STATES })
  @ApiQuery({ name: 'chatId', required: false, schema: { type: 'string', format: 'uuid' } })
  @ApiQuery({ name: 'executionId', required: false, schema: { type: 'string', format: 'uuid' } })
  @ApiOkResponse({ type: ApprovalPage })
  @ApiErrors(400, 401, 403)
  async list(
    @CurrentMember() caller: MemberCaller,
    @Query('state') state?: string,
    @Query('chatId') chatId?: string,
    @Query('executionId') executionId?: string,
    @Query('after') after?: string,
    @Query('limit') limit?: string,
  ): Promise<ApprovalPage> {
    const filter = { ...(state ? { state } : {}), ...(chatId ? { chatId } : {}), ...(executionId ? { executionId } : {}) };
    const page = await this.queries.execute(new ListApprovals(caller, filter, parsePageRequest(after, limit)));
    return { data: page.data.map(toApprovalBody), next: page.next };
  }

  @Get(':id')
  @Requires('executions.read')
  @ApiOperation({ summary: 'One approval', description: 'Any approval of the organization, also one the caller may not decide.' })
  @ApiOkResponse({ type: ApprovalBody })
  @ApiErrors(401, 403, 404)
  async get(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ApprovalBody> {
    return toApprovalBody(await this.queries.execute(new GetApproval(caller, id)));
  }

  @Post(':id/decision')
  @Requires('approvals.decide')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Approve or deny a pending tool call',
    description:
      'The Turn gets the decision at once: an approved call runs exactly once with its saved arguments; a denied one gives the model an error tool result with the reason. ' +
      'Repeating the decision the approval already has answers 200 and changes nothing; another decision on a decided, expired or cancelled approval is 409 `ApprovalAlreadyDecided`. ' +
      "An approval never grants what the platform, the Turn's member or its original token denies: the Turn's identity is checked again before the call is sent. " +
      "Who may decide: the member whose message started the Turn, owners and admins, and the roles and members the tool's `approvers` names; with `approvers.secondPerson` " +
      "the Turn's own member may not. Nobody decides a call of a Turn that runs with wider rights than their own (a permission of the Turn the caller's role and key scopes lack, " +
      'or a Vault the Turn\'s member may use and the caller may not). Anyone else of the organization gets 403 `Forbidden` with a message naming why; nothing changes.',
  })
  @ApiOkResponse({ type: ApprovalBody })
  @ApiErrors(400, 401, 403, 404, 409)
  async decide(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Body() body: ApprovalDecisionRequest): Promise<ApprovalBody> {
    return toApprovalBody(await this.commands.execute(new DecideApproval(caller, id, body.decision, body.reason ?? null)));
  }
}

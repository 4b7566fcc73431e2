import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiAcceptedResponse, ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type MemberCaller } from '@openbot/domain';
import { CreateProof, DeleteDeveloperTest, DeleteProof, GetDeveloperTest, GetProof, IndexApp, ListProofs, SearchAppIndex, StartDeveloperTest, VerifyProof } from '@openbot/features';
import { ExecutionStartedBody, givenValues } from '../apps/app.dto';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../openapi/page-query';
import { AppIndexPage, CreateProofRequest, DeveloperTestBody, DeveloperTestDeletedBody, DeveloperTestStartedBody, ProofBody, ProofList, StartDeveloperTestRequest, toAppIndexEntryBody, toDeveloperTestBody, toProofBody } from './app-catalog.dto';

// `:id` for the App: the router needs one parameter name per path position under /v1/apps.
@ApiTags('apps')
@ApiBearerAuth()
@Access('member')
@Controller('v1/apps')
export class AppProofsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post(':id/proofs')
  @Requires('apps.manage')
  @HttpCode(201)
  @ApiOperation({ summary: "Start a proof of the App's domain", description: 'A pending proof with a fresh token, to be served at `https://<domain>/.well-known/openbot-app-proof`. `domain` must be the host of the App URL.' })
  @ApiCreatedResponse({ type: ProofBody })
  @ApiErrors(400, 401, 403, 404)
  async create(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Body() body: CreateProofRequest): Promise<ProofBody> {
    return toProofBody(await this.commands.execute(new CreateProof(caller, id, body.domain)));
  }

  @Get(':id/proofs')
  @Requires('apps.manage')
  @ApiOperation({ summary: 'List the proofs of the App, newest first (at most 100)' })
  @ApiOkResponse({ type: ProofList })
  @ApiErrors(401, 403, 404)
  async list(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ProofList> {
    const proofs = await this.queries.execute(new ListProofs(caller, id));
    return { data: proofs.map(toProofBody) };
  }

  @Get(':id/proofs/:proofId')
  @Requires('apps.manage')
  @ApiOperation({ summary: 'Read one proof: its state is pending, verified or failed' })
  @ApiOkResponse({ type: ProofBody })
  @ApiErrors(401, 403, 404)
  async get(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Param('proofId') proofId: string): Promise<ProofBody> {
    return toProofBody(await this.queries.execute(new GetProof(caller, id, proofId)));
  }

  @Post(':id/proofs/:proofId/verify')
  @Requires('apps.manage')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Verify a proof (an execution)',
    description: 'Fetches `https://<domain>/.well-known/openbot-app-proof` through the egress policy, in the execution call log; the proof becomes `verified` when the answer is its token, else `failed`.',
  })
  @ApiAcceptedResponse({ type: ExecutionStartedBody })
  @ApiErrors(401, 403, 404)
  async verify(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Param('proofId') proofId: string): Promise<ExecutionStartedBody> {
    return this.commands.execute(new VerifyProof(caller, id, proofId));
  }

  @Delete(':id/proofs/:proofId')
  @Requires('apps.manage')
  @ApiOperation({ summary: 'Remove a proof; the App index hides the App unless another verified proof remains' })
  @ApiOkResponse({ type: ProofBody })
  @ApiErrors(401, 403, 404)
  async delete(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Param('proofId') proofId: string): Promise<ProofBody> {
    return toProofBody(await this.commands.execute(new DeleteProof(caller, id, proofId)));
  }

  @Post(':id/developer-tests')
  @Requires('apps.manage')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Start a developer test of the App (an execution, DEVT-01)',
    description:
      'Needs a verified proof of the App domain (409 AppProofRequired). `variables` and `headers` follow the rules of App connections (400 with the offending fields). A pre-publish connection as the caller, probed, its tools listed and closed, streamed as the execution events `developer_test.connected`, `developer_test.tools`, `developer_test.closed`. A 401 with OAuth discovery runs sign-in preparation for the developer’s own grant: the test is `needs_authorization` with an `authorizationUrl` and its `authorizationId` (event `developer_test.needs_authorization` `{ testId, authorizationId, authorizationUrl }`), OpenBot’s start URL bound to the developer (decision 066), until the developer signs in, then it connects again with that grant.',
  })
  @ApiAcceptedResponse({ type: DeveloperTestStartedBody })
  @ApiErrors(400, 401, 403, 404, 409)
  async startTest(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Body() body: StartDeveloperTestRequest): Promise<DeveloperTestStartedBody> {
    return this.commands.execute(new StartDeveloperTest(caller, id, body.remote, givenValues('variables', body.variables), givenValues('headers', body.headers)));
  }

  @Delete(':id/developer-tests/:testId')
  @Requires('apps.manage')
  @ApiOperation({
    summary: 'Remove a developer test',
    description: 'Its grant (the developer’s own) goes to service cleanup in the same transaction; the revocation waits for the run to end and close its connection. A run still going is cancelled.',
  })
  @ApiOkResponse({ type: DeveloperTestDeletedBody })
  @ApiErrors(401, 403, 404)
  async deleteTest(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Param('testId') testId: string): Promise<DeveloperTestDeletedBody> {
    return this.commands.execute(new DeleteDeveloperTest(caller, id, testId));
  }

  @Get(':id/developer-tests/:testId')
  @Requires('apps.manage')
  @ApiOperation({ summary: 'Read one developer test' })
  @ApiOkResponse({ type: DeveloperTestBody })
  @ApiErrors(401, 403, 404)
  async getTest(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Param('testId') testId: string): Promise<DeveloperTestBody> {
    return toDeveloperTestBody(await this.queries.execute(new GetDeveloperTest(caller, id, testId)));
  }

  @Post(':id/index')
  @Requires('apps.manage')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Crawl the App into the organization index (an execution)',
    description: 'Reads its card and lists the tools of its first remote without credentials; a 401 records it as needing authorization.',
  })
  @ApiAcceptedResponse({ type: ExecutionStartedBody })
  @ApiErrors(401, 403, 404)
  async index(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ExecutionStartedBody> {
    return this.commands.execute(new IndexApp(caller, id));
  }
}

@ApiTags('apps')
@ApiBearerAuth()
@Access('member')
@Controller('v1/app-index')
export class AppIndexController {
  constructor(@Inject(QueryBus) private readonly queries: QueryBus) {}

  @Get()
  @Requires('apps.read')
  @ApiOperation({
    summary: 'Search the App index of the organization',
    description: 'Each read checks the reader\'s rights and the App\'s current proof: only Apps with a verified proof are shown (MIG-04). `q` matches the name, title, description or a tool name.',
  })
  @ApiQuery({ name: 'q', required: false })
  @ApiPageQuery()
  @ApiOkResponse({ type: AppIndexPage })
  @ApiErrors(400, 401, 403)
  async search(@CurrentMember() caller: MemberCaller, @Query('q') q?: string, @Query('after') after?: string, @Query('limit') limit?: string): Promise<AppIndexPage> {
    const page = await this.queries.execute(new SearchAppIndex(caller, q, parsePageRequest(after, limit)));
    return { data: page.data.map(toAppIndexEntryBody), next: page.next };
  }
}

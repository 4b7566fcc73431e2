import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { InvalidInput, parsePageRequest, type PlatformAdmin } from '@openbot/domain';
import { CancelExecution, DecideExecution, ListStuckExecutions, UNSETTLED_STATES, type Json, type UnsettledState } from '@openbot/features';
import { Access, CurrentAdmin } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { DecisionRequest, ExecutionStateBody } from '../executions/execution.dto';
import { ApiPageQuery } from '../openapi/page-query';
import { StuckExecutionPage, toStuckExecutionBody } from './stuck-executions.dto';

const DEFAULT_OLDER_THAN_SECONDS = 300;
const MAX_OLDER_THAN_SECONDS = 365 * 24 * 3600;

/**
 * The operator's view of stuck work: executions of every organization that wait on something
 * outside themselves for longer than a threshold, and the two actions that settle them. The
 * actions are the same execution commands members use, recorded in the organization's audit log.
 */
@ApiTags('platform')
@ApiBearerAuth()
@Access('platform')
@Controller('v1/platform/executions')
export class StuckExecutionsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Get('stuck')
  @ApiOperation({
    summary: 'Executions unsettled for longer than a threshold (platform administrator)',
    description:
      'Executions in `waiting`, `outcome_unknown` or `cancelling` whose last change is older than `olderThan` seconds (default 300), ' +
      'oldest first, across organizations, with the owning node and its lease. `outcome_unknown` needs a decision ' +
      '(`POST /v1/platform/executions/{id}/decision`); a `cancelling` execution whose lease ran out and that no node takes over points at a node problem.',
  })
  @ApiQuery({ name: 'olderThan', required: false, schema: { type: 'integer', minimum: 0, maximum: MAX_OLDER_THAN_SECONDS, default: DEFAULT_OLDER_THAN_SECONDS } })
  @ApiQuery({ name: 'state', required: false, description: 'Only this state; repeat or comma-separate for several', schema: { type: 'string', enum: [...UNSETTLED_STATES] } })
  @ApiPageQuery()
  @ApiOkResponse({ type: StuckExecutionPage })
  @ApiErrors(400, 401, 403)
  async stuck(
    @CurrentAdmin() _admin: PlatformAdmin,
    @Query('olderThan') olderThan?: string,
    @Query('state') state?: string | string[],
    @Query('after') after?: string,
    @Query('limit') limit?: string,
  ): Promise<StuckExecutionPage> {
    const page = parsePageRequest(after, limit);
    const seconds = parseOlderThan(olderThan);
    const states = parseStates(state);
    const found = await this.queries.execute(new ListStuckExecutions(seconds, states, page));
    const now = Date.now();
    return { data: found.data.map((e) => toStuckExecutionBody(e, now)), next: found.next };
  }

  @Post(':id/cancel')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Cancel any execution (platform administrator)',
    description: 'The member route’s cancel, for any organization’s execution; the request is recorded in that organization’s audit log.',
  })
  @ApiResponse({ status: 202, type: ExecutionStateBody })
  @ApiErrors(401, 403, 404)
  async cancel(@CurrentAdmin() admin: PlatformAdmin, @Param('id') id: string): Promise<ExecutionStateBody> {
    return this.commands.execute(new CancelExecution(admin, id));
  }

  @Post(':id/decision')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Resolve any execution waiting in outcome_unknown (platform administrator)',
    description: 'The member route’s decision, for any organization’s execution; recorded in that organization’s audit log (the result is not). 409 in any other state.',
  })
  @ApiResponse({ status: 202, type: ExecutionStateBody })
  @ApiErrors(400, 401, 403, 404, 409)
  async decide(@CurrentAdmin() admin: PlatformAdmin, @Param('id') id: string, @Body() body: DecisionRequest): Promise<ExecutionStateBody> {
    return this.commands.execute(new DecideExecution(admin, id, body.decision, body.result as Json | undefined));
  }
}

function parseOlderThan(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_OLDER_THAN_SECONDS;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n > MAX_OLDER_THAN_SECONDS) throw new InvalidInput([{ path: 'olderThan', message: `olderThan must be whole seconds from 0 to ${MAX_OLDER_THAN_SECONDS}` }]);
  return n;
}

function parseStates(raw: string | string[] | undefined): UnsettledState[] {
  if (raw === undefined || raw === '') return [...UNSETTLED_STATES];
  const names = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
  const wrong = names.filter((n) => !(UNSETTLED_STATES as readonly string[]).includes(n));
  if (wrong.length > 0 || names.length === 0) throw new InvalidInput([{ path: 'state', message: `state must be one of ${UNSETTLED_STATES.join(', ')}` }]);
  return [...new Set(names)] as UnsettledState[];
}

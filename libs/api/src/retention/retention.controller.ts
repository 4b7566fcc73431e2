import { Body, Controller, Get, Inject, Put } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { MemberCaller } from '@openbot/domain';
import { GetRetention, SetRetention } from '@openbot/features';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { RetentionBody, SetRetentionRequest, toRetentionBody } from './retention.dto';

/**
 * How long the organization's ended executions keep their `text.delta` events and call results
 * (docs/decisions/041-retention.md; needs `retention.manage`: owners and admins). The final state,
 * the reply, usage and the audit log are kept whatever these say.
 */
@ApiTags('retention')
@ApiBearerAuth()
@Access('member')
@Controller('v1/retention')
export class RetentionController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Get()
  @Requires('retention.manage')
  @ApiOperation({ summary: 'Read the organization’s retention settings and what applies (its own, else the platform defaults)' })
  @ApiOkResponse({ type: RetentionBody })
  @ApiErrors(401, 403)
  async get(@CurrentMember() caller: MemberCaller): Promise<RetentionBody> {
    return toRetentionBody(await this.queries.execute(new GetRetention(caller)));
  }

  @Put()
  @Requires('retention.manage')
  @ApiOperation({
    summary: 'Set how many days after an execution ended its `text.delta` events and its call results are kept',
    description:
      'PUT replaces both settings, so the body must name both: null returns a setting to the platform default, and a field left out is a 400 ' +
      'naming it (nothing changes), never a silent reset. The retention run (every 15 minutes by default) applies it, ' +
      'also to executions that ended before the change. Pruned deltas are gone for good: the final `execution.ended` event of such an ' +
      'execution then carries `pruned`. Kept whatever the settings: the execution’s final state and result, every other event, usage and the audit log. Audited.',
  })
  @ApiOkResponse({ type: RetentionBody })
  @ApiErrors(400, 401, 403)
  async set(@CurrentMember() caller: MemberCaller, @Body() body: SetRetentionRequest): Promise<RetentionBody> {
    return toRetentionBody(await this.commands.execute(new SetRetention(caller, body.textDeltaDays, body.callPayloadDays)));
  }
}

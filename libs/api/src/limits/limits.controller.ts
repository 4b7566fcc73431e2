import { Controller, Get, Inject } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import type { MemberCaller } from '@openbot/domain';
import { GetOrganizationLimits } from '@openbot/platform';
import { CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';

class LimitStandingBody {
  @ApiProperty({ description: 'The limit the operator set (the same for every organization)' })
  limit!: number;

  @ApiProperty({ type: Number, nullable: true, description: 'How much the organization uses now; null where nothing is held between requests' })
  used!: number | null;
}

export class OrganizationLimitsBody {
  @ApiProperty({ type: LimitStandingBody, description: 'Live (unrevoked, unexpired) API keys. Past it: 409 LimitReached' })
  apiKeys!: LimitStandingBody;

  @ApiProperty({ type: LimitStandingBody, description: 'Open event streams (SSE, waiting long polls) of all credentials together. Past it: 429 RateLimited' })
  streams!: LimitStandingBody;

  @ApiProperty({ type: LimitStandingBody, description: 'Turns waiting behind the advancing one, per Chat; `used` is the most in any one Chat. Past it: 429 RateLimited' })
  queuedTurnsPerChat!: LimitStandingBody;

  @ApiProperty({ type: LimitStandingBody, description: 'Tool calls run per model step; the calls past it get an error result naming the limit, and the step proceeds. `used` is null' })
  toolCallsPerStep!: LimitStandingBody;

  @ApiProperty({ type: LimitStandingBody, description: "Turns running at once across the organization's Chats (tasks included); a message that would start another: 429 RateLimited" })
  runningTurns!: LimitStandingBody;

  @ApiProperty({ type: LimitStandingBody, description: 'Bytes of stored files. An upload that does not fit: 409 LimitReached' })
  fileBytes!: LimitStandingBody;

  @ApiProperty({ type: LimitStandingBody, description: "Memory items of all the organization's Bots. Past it: 409 LimitReached (the learner stores only what fits)" })
  memoryItems!: LimitStandingBody;
}

@ApiTags('limits')
@ApiBearerAuth()
@Controller('v1/limits')
export class LimitsController {
  constructor(@Inject(QueryBus) private readonly queries: QueryBus) {}

  @Get()
  @Requires('organization.read')
  @ApiOperation({
    summary: "The organization's limits and its use of them",
    description:
      'What one organization may hold or run at once, set by the operator (docs/operating.md "Per-organization limits"). ' +
      'A request past a limit answers 409 LimitReached (what it holds: `apiKeys`, `fileBytes`, `memoryItems`) or ' +
      '429 RateLimited with Retry-After (what frees by itself: `streams`, `queuedTurnsPerChat`, `runningTurns`), the `limit` field naming it.',
  })
  @ApiOkResponse({ type: OrganizationLimitsBody })
  @ApiErrors(401, 403)
  async get(@CurrentMember() caller: MemberCaller): Promise<OrganizationLimitsBody> {
    return (await this.queries.execute(new GetOrganizationLimits(caller))) as OrganizationLimitsBody;
  }
}

import { Controller, Get, Inject, Query } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type MemberCaller } from '@openbot/domain';
import { GetCredits, ListCreditEntries } from '@openbot/platform';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../openapi/page-query';
import { CreditEntryPage, CreditsBody, toCreditEntryBody } from './billing.dto';

@ApiTags('billing')
@ApiBearerAuth()
@Access('member')
@Controller('v1/credits')
export class CreditsController {
  constructor(@Inject(QueryBus) private readonly queries: QueryBus) {}

  @Get()
  @Requires('usage.read')
  @ApiOperation({ summary: "The organization's credits: the ledger's sum and what calls in flight and unknown usage hold" })
  @ApiOkResponse({ type: CreditsBody })
  @ApiErrors(401, 403)
  async get(@CurrentMember() caller: MemberCaller): Promise<CreditsBody> {
    return this.queries.execute(new GetCredits(caller));
  }

  @Get('ledger')
  @Requires('usage.read')
  @ApiOperation({ summary: "The organization's credits ledger, oldest first: grants, adjustments and one charge per confirmed usage record" })
  @ApiPageQuery()
  @ApiOkResponse({ type: CreditEntryPage })
  @ApiErrors(400, 401, 403)
  async ledger(@CurrentMember() caller: MemberCaller, @Query('after') after?: string, @Query('limit') limit?: string): Promise<CreditEntryPage> {
    const page = await this.queries.execute(new ListCreditEntries(caller, parsePageRequest(after, limit)));
    return { data: page.data.map(toCreditEntryBody), next: page.next };
  }
}

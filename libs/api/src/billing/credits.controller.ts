import { Controller, Get, Inject, Query } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { InvalidInput, parseListOrder, parsePageRequest, rejectUnknownQueryParameters, type MemberCaller } from '@openbot/domain';
import { CREDIT_ENTRY_KINDS, GetCredits, ListCreditEntries, type CreditEntryKind } from '@openbot/platform';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ApiOrderQuery, ApiPageQuery } from '../openapi/page-query';
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
  @ApiOperation({
    summary: "The organization's credits ledger, oldest first unless `order=desc`: grants, adjustments and one charge per confirmed usage record",
    description: 'An unknown `type` or `order`, or a query parameter other than `after`, `limit`, `order` and `type`, is a 400 naming it.',
  })
  @ApiPageQuery()
  @ApiOrderQuery('asc')
  @ApiQuery({ name: 'type', required: false, description: 'Only entries of this kind', schema: { type: 'string', enum: [...CREDIT_ENTRY_KINDS] } })
  @ApiOkResponse({ type: CreditEntryPage })
  @ApiErrors(400, 401, 403)
  async ledger(@CurrentMember() caller: MemberCaller, @Query() query: Record<string, unknown>): Promise<CreditEntryPage> {
    rejectUnknownQueryParameters(query, ['after', 'limit', 'order', 'type']);
    const page = await this.queries.execute(new ListCreditEntries(caller, parsePageRequest(query.after, query.limit), parseListOrder(query.order, 'asc'), creditEntryKindOf(query.type)));
    return { data: page.data.map(toCreditEntryBody), next: page.next };
  }
}

/** `?type=` of the ledger: absent or empty is every kind; anything else must be a kind. */
function creditEntryKindOf(type: unknown): CreditEntryKind | null {
  if (type === undefined || type === '') return null;
  if (typeof type === 'string' && (CREDIT_ENTRY_KINDS as readonly string[]).includes(type)) return type as CreditEntryKind;
  throw new InvalidInput([{ path: 'type', message: `type must be one of ${CREDIT_ENTRY_KINDS.join(', ')}` }]);
}

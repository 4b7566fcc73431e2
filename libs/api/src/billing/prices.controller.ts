import { Body, Controller, Get, HttpCode, Inject, Param, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type MemberCaller } from '@openbot/domain';
import { ListPrices, SetPrice, type PriceInput } from '@openbot/platform';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../openapi/page-query';
import { PriceBody, PricePage, SetPriceRequest, toPriceBody } from './billing.dto';

export function priceInput(body: SetPriceRequest): PriceInput {
  return {
    inputPerMillionMicros: body.inputPerMillionMicros,
    outputPerMillionMicros: body.outputPerMillionMicros,
    cachedInputPerMillionMicros: body.cachedInputPerMillionMicros ?? null,
    effectiveFrom: body.effectiveFrom === undefined ? null : new Date(body.effectiveFrom),
  };
}

export const MODEL_PARAM = ApiParam({ name: 'model', description: '`<provider name>/<model id>`, URL-encoded (`local%2Fgpt-4o`)' });

@ApiTags('billing')
@ApiBearerAuth()
@Access('member')
@Controller('v1/prices')
export class PricesController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Put(':model')
  @Requires('billing.manage')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Add a price version for a model',
    description:
      'A call is priced by the version in force when it started; a new version never changes recorded costs. Without a price a call costs 0, ' +
      'as long as the organization has no credits. Once it has credits its prices are the platform’s: this route answers 403, the administrator uses ' +
      '`PUT /v1/platform/organizations/{id}/prices/{model}`, and versions set here (`setBy: "organization"`, also earlier ones) no longer price ' +
      'its calls. Recorded in the audit log (`price.set`).',
  })
  @MODEL_PARAM
  @ApiOkResponse({ type: PriceBody })
  @ApiErrors(400, 401, 403)
  async set(@CurrentMember() caller: MemberCaller, @Param('model') model: string, @Body() body: SetPriceRequest): Promise<PriceBody> {
    return toPriceBody(await this.commands.execute(new SetPrice(caller.organizationId, caller, model, priceInput(body))));
  }

  @Get()
  @Requires('usage.read')
  @ApiOperation({
    summary: "List the organization's price versions, oldest first",
    description: 'Each version says whether it is in force (`inForce`): the one a call of its model starting now is priced at, at most one per model.',
  })
  @ApiPageQuery()
  @ApiOkResponse({ type: PricePage })
  @ApiErrors(400, 401, 403)
  async list(@CurrentMember() caller: MemberCaller, @Query('after') after?: string, @Query('limit') limit?: string): Promise<PricePage> {
    const page = await this.queries.execute(new ListPrices(caller, parsePageRequest(after, limit)));
    return { data: page.data.map((price) => ({ ...toPriceBody(price), inForce: price.inForce })), next: page.next };
  }
}

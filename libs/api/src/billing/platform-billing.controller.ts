import { Body, Controller, Headers, HttpCode, Inject, Param, Post, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { PlatformAdmin } from '@openbot/domain';
import { GrantCredits, SetPrice } from '@openbot/platform';
import { Access, CurrentAdmin } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { commandKeyOf } from '../validation/command-key';
import { CreditEntryBody, GrantCreditsRequest, PriceBody, SetPriceRequest, toCreditEntryBody, toPriceBody } from './billing.dto';
import { MODEL_PARAM, priceInput } from './prices.controller';

/** The platform administrator's billing routes: credits, and the prices of organizations with credits. */
@ApiTags('billing')
@ApiBearerAuth()
@Access('platform')
@Controller('v1/platform/organizations/:id')
export class PlatformBillingController {
  constructor(@Inject(CommandBus) private readonly commands: CommandBus) {}

  @Post('credits')
  @HttpCode(201)
  @ApiOperation({
    summary: "Grant (positive) or adjust (negative) an organization's credits (platform administrator)",
    description:
      'One append-only ledger entry. The first one makes credits limit the organization and makes its prices the platform’s: from then on ' +
      'only versions set here (or the operator’s default price) price its calls, never one the organization set before, and a model without ' +
      'one answers 402 ModelNotPriced. With `Idempotency-Key` the same key and body answer the same entry; the same key with another body ' +
      'answers 409 CommandKeyConflict. The entry is recorded in the organization’s audit log (`credits.granted` or `credits.adjusted`).',
  })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1 to 200 visible ASCII characters' })
  @ApiCreatedResponse({ type: CreditEntryBody })
  @ApiErrors(400, 401, 403, 404, 409)
  async grant(
    @CurrentAdmin() admin: PlatformAdmin,
    @Param('id') id: string,
    @Body() body: GrantCreditsRequest,
    @Headers() headers: Record<string, string | undefined>,
  ): Promise<CreditEntryBody> {
    const key = commandKeyOf(headers);
    return toCreditEntryBody(await this.commands.execute(new GrantCredits(admin, id, body.amountMicros, body.reason.trim(), key)));
  }

  @Put('prices/:model')
  @HttpCode(200)
  @ApiOperation({
    summary: "Add a price version for one of an organization's models (platform administrator)",
    description:
      'Same body and rules as `PUT /v1/prices/{model}`. The version is the platform’s (`setBy: "platform"`): once the organization has credits, ' +
      'only such versions price its calls. Recorded in the organization’s audit log (`price.set`).',
  })
  @MODEL_PARAM
  @ApiOkResponse({ type: PriceBody })
  @ApiErrors(400, 401, 403, 404)
  async setPrice(@CurrentAdmin() admin: PlatformAdmin, @Param('id') id: string, @Param('model') model: string, @Body() body: SetPriceRequest): Promise<PriceBody> {
    return toPriceBody(await this.commands.execute(new SetPrice(id, admin, model, priceInput(body))));
  }
}

import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Forbidden, InvalidInput, newId, NotFound, isUuid } from '@openbot/domain';
import { Database } from '../../database/sql';
import { PRICE_VIEW_COLUMNS, type PriceView } from '../billing-views';

export interface PriceInput {
  readonly inputPerMillionMicros: number;
  readonly outputPerMillionMicros: number;
  readonly cachedInputPerMillionMicros: number | null;
  readonly effectiveFrom: Date | null;
}

/** Clock skew a client's `effectiveFrom: now` may have: within it, a time just past means now. */
const PAST_TOLERANCE_MS = 60_000;

/**
 * Adds a price version for one model of an organization (PLAT-08). Versions are never changed:
 * a call is priced by the version in force when it started, so a new one changes no recorded cost.
 * `effectiveFrom` defaults to now and may not be in the past (a version that started before
 * calls already priced would contradict them). The model's provider must exist in the
 * organization. Once the organization has credits, only the platform sets its prices
 * (`by: 'member'` answers 403): otherwise an owner could price a model at 0 and spend granted
 * credits for nothing. The credit account's row lock orders this check with the first grant.
 */
export class SetPrice extends Command<PriceView> {
  constructor(
    readonly organizationId: string,
    readonly by: 'member' | 'platform',
    readonly model: string,
    readonly price: PriceInput,
  ) {
    super();
  }
}

@CommandHandler(SetPrice)
export class SetPriceHandler implements ICommandHandler<SetPrice> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ organizationId, by, model, price }: SetPrice): Promise<PriceView> {
    if (by === 'platform' && !isUuid(organizationId)) throw new NotFound('Organization');
    return this.db.transaction(async (tx) => {
      if (by === 'platform') {
        const org = await tx.one('SELECT 1 FROM organizations WHERE id = $1', [organizationId]);
        if (org === undefined) throw new NotFound('Organization');
      }
      const credits = await tx.one('SELECT 1 FROM credit_accounts WHERE organization_id = $1 FOR SHARE', [organizationId]);
      if (credits !== undefined && by === 'member') {
        throw new Forbidden('This organization has credits: its prices are set by the platform administrator.');
      }
      const slash = model.indexOf('/');
      const provider = slash > 0 && slash < model.length - 1 ? model.slice(0, slash) : null;
      if (provider === null) throw new InvalidInput([{ path: 'model', message: 'model must be `<provider name>/<model id>`' }]);
      const known = await tx.one('SELECT 1 FROM model_providers WHERE organization_id = $1 AND name = $2', [organizationId, provider]);
      if (known === undefined) throw new InvalidInput([{ path: 'model', message: `the organization has no model provider named ${provider}` }]);
      const now = (await tx.one<{ now: Date }>('SELECT now() AS now'))!.now;
      if (price.effectiveFrom !== null && price.effectiveFrom.getTime() < now.getTime() - PAST_TOLERANCE_MS) {
        throw new InvalidInput([{ path: 'effectiveFrom', message: 'effectiveFrom may not be in the past' }]);
      }
      const from = price.effectiveFrom === null || price.effectiveFrom < now ? now : price.effectiveFrom;
      return (await tx.one<PriceView>(
        `INSERT INTO prices (id, organization_id, model, input_per_million_micros, output_per_million_micros, cached_input_per_million_micros, effective_from)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${PRICE_VIEW_COLUMNS}`,
        [newId(), organizationId, model, price.inputPerMillionMicros, price.outputPerMillionMicros, price.cachedInputPerMillionMicros ?? price.inputPerMillionMicros, from],
      ))!;
    });
  }
}

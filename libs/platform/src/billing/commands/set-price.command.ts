import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Forbidden, InvalidInput, newId, NotFound, isUuid, type MemberCaller, type PlatformAdmin } from '@openbot/domain';
import { recordAudit } from '../../audit/record-audit';
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
 * (a member answers 403): otherwise an owner could price a model at 0 and spend granted
 * credits for nothing. The credit account's row lock orders this check with the first grant.
 * Each version records who set it (`organization` or `platform`): under credits only the
 * platform's price calls, so a version the organization set before its first grant, even one
 * dated in the future, never does (decision 072). The new version is audited (`price.set`) in
 * the organization's log, with the administrator as the actor for the platform's route.
 */
export class SetPrice extends Command<PriceView> {
  constructor(
    readonly organizationId: string,
    /** The organization's member (`PUT /v1/prices/{model}`) or the platform administrator. */
    readonly by: MemberCaller | PlatformAdmin,
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
    const platform = by.kind === 'platform-admin';
    if (platform && !isUuid(organizationId)) throw new NotFound('Organization');
    return this.db.transaction(async (tx) => {
      if (platform) {
        const org = await tx.one('SELECT 1 FROM organizations WHERE id = $1', [organizationId]);
        if (org === undefined) throw new NotFound('Organization');
      }
      const credits = await tx.one('SELECT 1 FROM credit_accounts WHERE organization_id = $1 FOR SHARE', [organizationId]);
      if (credits !== undefined && !platform) {
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
      const version = (await tx.one<PriceView>(
        `INSERT INTO prices (id, organization_id, model, input_per_million_micros, output_per_million_micros, cached_input_per_million_micros, effective_from, set_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${PRICE_VIEW_COLUMNS}`,
        [
          newId(),
          organizationId,
          model,
          price.inputPerMillionMicros,
          price.outputPerMillionMicros,
          price.cachedInputPerMillionMicros ?? price.inputPerMillionMicros,
          from,
          platform ? 'platform' : 'organization',
        ],
      ))!;
      await recordAudit(tx, {
        organizationId,
        actor: by,
        action: 'price.set',
        target: { type: 'price', id: version.id },
        details: {
          model,
          setBy: version.setBy,
          inputPerMillionMicros: version.inputPerMillionMicros,
          outputPerMillionMicros: version.outputPerMillionMicros,
          cachedInputPerMillionMicros: version.cachedInputPerMillionMicros,
          effectiveFrom: new Date(version.effectiveFrom).toISOString(),
        },
      });
      return version;
    });
  }
}

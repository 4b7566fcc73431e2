import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../database/sql';
import { PRICE_VIEW_COLUMNS, type PriceView } from '../billing-views';

/** A listed price version, and whether it is the one that prices the model's calls now. */
export interface ListedPrice extends PriceView {
  readonly inForce: boolean;
}

/**
 * Every price version of the organization, oldest first (versions are never changed), each marked
 * `inForce` when it is the version a call of its model starting now is priced at, by the rule
 * `prices.inForce` and `prices.forCredits` apply: the latest `effectiveFrom` not after now (ties:
 * the newer row); with credits only `platform` versions, else the latest `default` one (a changed
 * operator default adds a new `default` version at the next call). At most one per model.
 */
export class ListPrices extends Query<Page<ListedPrice>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListPrices)
export class ListPricesHandler implements IQueryHandler<ListPrices> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page }: ListPrices): Promise<Page<ListedPrice>> {
    const rows = await this.db.rows<ListedPrice>(
      `WITH credits AS (SELECT EXISTS (SELECT 1 FROM credit_accounts WHERE organization_id = $1) AS held)
       SELECT ${PRICE_VIEW_COLUMNS},
              id = (SELECT q.id FROM prices q, credits
                     WHERE q.organization_id = $1 AND q.model = prices.model AND q.effective_from <= now()
                       AND (NOT credits.held OR q.set_by IN ('platform', 'default'))
                     ORDER BY (credits.held AND q.set_by = 'platform') DESC, q.effective_from DESC, q.created_at DESC, q.id DESC LIMIT 1) IS TRUE AS "inForce"
         FROM prices WHERE organization_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3`,
      [caller.organizationId, page.after, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

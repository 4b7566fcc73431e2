import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../database/sql';
import { PRICE_VIEW_COLUMNS, type PriceView } from '../billing-views';

/** Every price version of the organization, oldest first (versions are never changed). */
export class ListPrices extends Query<Page<PriceView>> {
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

  async execute({ caller, page }: ListPrices): Promise<Page<PriceView>> {
    const rows = await this.db.rows<PriceView>(
      `SELECT ${PRICE_VIEW_COLUMNS} FROM prices WHERE organization_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3`,
      [caller.organizationId, page.after, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

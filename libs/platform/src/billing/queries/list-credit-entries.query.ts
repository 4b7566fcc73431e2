import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { toPage, type ListOrder, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../database/sql';
import { CREDIT_ENTRY_COLUMNS, type CreditEntryKind, type CreditEntryView } from '../billing-views';

/**
 * The organization's credits ledger, oldest first (`asc`) or newest first (`desc`), optionally
 * only entries of one kind; the cursor continues in the same order and filter.
 */
export class ListCreditEntries extends Query<Page<CreditEntryView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
    readonly order: ListOrder = 'asc',
    readonly kind: CreditEntryKind | null = null,
  ) {
    super();
  }
}

@QueryHandler(ListCreditEntries)
export class ListCreditEntriesHandler implements IQueryHandler<ListCreditEntries> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page, order, kind }: ListCreditEntries): Promise<Page<CreditEntryView>> {
    const rows = await this.db.rows<CreditEntryView>(
      `SELECT ${CREDIT_ENTRY_COLUMNS} FROM credit_entries
        WHERE organization_id = $1 AND ($2::uuid IS NULL OR ${order === 'asc' ? 'id > $2::uuid' : 'id < $2::uuid'}) AND ($4::text IS NULL OR kind = $4::text)
        ORDER BY id ${order === 'asc' ? 'ASC' : 'DESC'} LIMIT $3`,
      [caller.organizationId, page.after, page.limit + 1, kind],
    );
    return toPage(rows, page.limit);
  }
}

import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../database/sql';
import { CREDIT_ENTRY_COLUMNS, type CreditEntryView } from '../billing-views';

/** The organization's credits ledger, oldest first. */
export class ListCreditEntries extends Query<Page<CreditEntryView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListCreditEntries)
export class ListCreditEntriesHandler implements IQueryHandler<ListCreditEntries> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page }: ListCreditEntries): Promise<Page<CreditEntryView>> {
    const rows = await this.db.rows<CreditEntryView>(
      `SELECT ${CREDIT_ENTRY_COLUMNS} FROM credit_entries WHERE organization_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3`,
      [caller.organizationId, page.after, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

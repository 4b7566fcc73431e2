import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../database/sql';
import { VAULT_VIEW_COLUMNS, type VaultView } from '../vault-view';

/** The caller's organization's Vaults, oldest first: names only (`vaults.read`). */
export class ListVaults extends Query<Page<VaultView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListVaults)
export class ListVaultsHandler implements IQueryHandler<ListVaults> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page }: ListVaults): Promise<Page<VaultView>> {
    const rows = await this.db.rows<VaultView>(
      `SELECT ${VAULT_VIEW_COLUMNS} FROM vaults WHERE organization_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3`,
      [caller.organizationId, page.after, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

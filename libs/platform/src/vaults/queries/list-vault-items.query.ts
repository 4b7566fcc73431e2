import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../database/sql';
import { VAULT_ITEM_VIEW_COLUMNS, type VaultItemView } from '../vault-view';

/** The items of one Vault, oldest first: names, field names and hosts, never a value. */
export class ListVaultItems extends Query<Page<VaultItemView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly vaultId: string,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListVaultItems)
export class ListVaultItemsHandler implements IQueryHandler<ListVaultItems> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, vaultId, page }: ListVaultItems): Promise<Page<VaultItemView>> {
    if (!isUuid(vaultId)) throw new NotFound('Vault');
    const found = await this.db.count('SELECT 1 FROM vaults WHERE id = $1 AND organization_id = $2', [vaultId, caller.organizationId]);
    if (found === 0) throw new NotFound('Vault');
    const rows = await this.db.rows<VaultItemView>(
      `SELECT ${VAULT_ITEM_VIEW_COLUMNS} FROM vault_items
        WHERE vault_id = $1 AND organization_id = $2 AND ($3::uuid IS NULL OR id > $3::uuid) ORDER BY id LIMIT $4`,
      [vaultId, caller.organizationId, page.after, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

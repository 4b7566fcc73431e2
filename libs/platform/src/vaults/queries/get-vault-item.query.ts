import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';
import { VAULT_ITEM_VIEW_COLUMNS, type VaultItemView } from '../vault-view';

/** One item of one Vault of the caller's organization, without its values. */
export class GetVaultItem extends Query<VaultItemView> {
  constructor(
    readonly caller: MemberCaller,
    readonly vaultId: string,
    readonly itemId: string,
  ) {
    super();
  }
}

@QueryHandler(GetVaultItem)
export class GetVaultItemHandler implements IQueryHandler<GetVaultItem> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, vaultId, itemId }: GetVaultItem): Promise<VaultItemView> {
    if (!isUuid(vaultId)) throw new NotFound('Vault');
    const vault = await this.db.count('SELECT 1 FROM vaults WHERE id = $1 AND organization_id = $2', [vaultId, caller.organizationId]);
    if (vault === 0) throw new NotFound('Vault');
    if (!isUuid(itemId)) throw new NotFound('VaultItem');
    const row = await this.db.one<VaultItemView>(`SELECT ${VAULT_ITEM_VIEW_COLUMNS} FROM vault_items WHERE id = $1 AND vault_id = $2`, [itemId, vaultId]);
    if (row === undefined) throw new NotFound('VaultItem');
    return row;
  }
}

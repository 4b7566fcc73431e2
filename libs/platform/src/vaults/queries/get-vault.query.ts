import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';
import { VAULT_VIEW_COLUMNS, type VaultView } from '../vault-view';

/** One Vault of the caller's organization; another organization's or an unknown ID is NotFound (IDN-08). */
export class GetVault extends Query<VaultView> {
  constructor(
    readonly caller: MemberCaller,
    readonly id: string,
  ) {
    super();
  }
}

@QueryHandler(GetVault)
export class GetVaultHandler implements IQueryHandler<GetVault> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, id }: GetVault): Promise<VaultView> {
    if (!isUuid(id)) throw new NotFound('Vault');
    const row = await this.db.one<VaultView>(`SELECT ${VAULT_VIEW_COLUMNS} FROM vaults WHERE id = $1 AND organization_id = $2`, [id, caller.organizationId]);
    if (row === undefined) throw new NotFound('Vault');
    return row;
  }
}

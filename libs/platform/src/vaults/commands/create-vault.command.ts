import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Conflict, newId, type MemberCaller } from '@openbot/domain';
import { recordAudit } from '../../audit/record-audit';
import { Database } from '../../database/sql';
import { VAULT_VIEW_COLUMNS, type VaultView } from '../vault-view';

/**
 * Creates a Vault in the caller's organization. A member who creates one is granted `vaults.use`
 * on it in the same transaction (owners and admins hold it on every Vault already).
 */
export class CreateVault extends Command<VaultView> {
  constructor(
    readonly caller: MemberCaller,
    readonly name: string,
  ) {
    super();
  }
}

@CommandHandler(CreateVault)
export class CreateVaultHandler implements ICommandHandler<CreateVault> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, name }: CreateVault): Promise<VaultView> {
    return this.db.transaction(async (tx) => {
      const row = await tx.one<VaultView>(
        `INSERT INTO vaults (id, organization_id, name) VALUES ($1, $2, $3)
         ON CONFLICT (organization_id, name) DO NOTHING RETURNING ${VAULT_VIEW_COLUMNS}`,
        [newId(), caller.organizationId, name],
      );
      if (row === undefined) throw new Conflict('VaultNameTaken', `A Vault named "${name}" already exists.`);
      const granted = caller.role !== 'owner' && caller.role !== 'admin';
      if (granted) await tx.count('INSERT INTO vault_users (vault_id, member_id) VALUES ($1, $2)', [row.id, caller.memberId]);
      await recordAudit(tx, { organizationId: caller.organizationId, actor: caller, action: 'vault.created', target: { type: 'vault', id: row.id }, details: { name: row.name, granted: granted ? [caller.memberId] : [] } });
      return row;
    });
  }
}

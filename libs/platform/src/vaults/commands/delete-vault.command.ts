import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { NotFound, type MemberCaller } from '@openbot/domain';
import { recordAudit } from '../../audit/record-audit';
import { Database } from '../../database/sql';
import { vaultForChange } from '../vault-input';
import { VAULT_VIEW_COLUMNS, type VaultView } from '../vault-view';

/**
 * Deletes a Vault with its items and their sealed fields, in one transaction. A reference to one
 * of its items fails `forbidden` at its next send (SEC-02): nothing falls back to another item.
 */
export class DeleteVault extends Command<VaultView> {
  constructor(
    readonly caller: MemberCaller,
    readonly id: string,
  ) {
    super();
  }
}

@CommandHandler(DeleteVault)
export class DeleteVaultHandler implements ICommandHandler<DeleteVault> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, id }: DeleteVault): Promise<VaultView> {
    return this.db.transaction(async (tx) => {
      await vaultForChange(tx, caller, id, true);
      const records = await tx.rows<{ id: string }>('DELETE FROM vault_items WHERE vault_id = $1 RETURNING fields_record_id AS id', [id]);
      const row = await tx.one<VaultView>(`DELETE FROM vaults WHERE id = $1 AND organization_id = $2 RETURNING ${VAULT_VIEW_COLUMNS}`, [id, caller.organizationId]);
      if (row === undefined) throw new NotFound('Vault');
      if (records.length > 0) await tx.count('DELETE FROM sealed_records WHERE id = ANY($1::uuid[])', [records.map((r) => r.id)]);
      await recordAudit(tx, { organizationId: caller.organizationId, actor: caller, action: 'vault.deleted', target: { type: 'vault', id }, details: { name: row.name, items: records.length } });
      return row;
    });
  }
}

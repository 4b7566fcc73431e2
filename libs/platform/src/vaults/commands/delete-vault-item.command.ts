import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { recordAudit } from '../../audit/record-audit';
import { Database } from '../../database/sql';
import { vaultForChange } from '../vault-input';
import { VAULT_ITEM_VIEW_COLUMNS, type VaultItemView } from '../vault-view';

/**
 * Deletes an item and its sealed fields. References to it fail `forbidden` at their next send; a
 * later item of the same name is another ID and never takes their place (SEC-02).
 */
export class DeleteVaultItem extends Command<VaultItemView> {
  constructor(
    readonly caller: MemberCaller,
    readonly vaultId: string,
    readonly itemId: string,
  ) {
    super();
  }
}

@CommandHandler(DeleteVaultItem)
export class DeleteVaultItemHandler implements ICommandHandler<DeleteVaultItem> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, vaultId, itemId }: DeleteVaultItem): Promise<VaultItemView> {
    return this.db.transaction(async (tx) => {
      await vaultForChange(tx, caller, vaultId, false);
      if (!isUuid(itemId)) throw new NotFound('VaultItem');
      const row = await tx.one<VaultItemView & { recordId: string }>(
        `DELETE FROM vault_items WHERE id = $1 AND vault_id = $2 RETURNING ${VAULT_ITEM_VIEW_COLUMNS}, fields_record_id AS "recordId"`,
        [itemId, vaultId],
      );
      if (row === undefined) throw new NotFound('VaultItem');
      await tx.count('DELETE FROM sealed_records WHERE id = $1', [row.recordId]);
      const { recordId: _recordId, ...view } = row;
      await recordAudit(tx, { organizationId: caller.organizationId, actor: caller, action: 'vault-item.deleted', target: { type: 'vault-item', id: itemId }, details: { vaultId, name: view.name } });
      return view;
    });
  }
}

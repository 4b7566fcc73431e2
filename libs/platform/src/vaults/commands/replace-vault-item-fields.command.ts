import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { recordAudit } from '../../audit/record-audit';
import { Database } from '../../database/sql';
import { SealedRecords } from '../../sealing/sealed-records';
import { checkFields, vaultForChange } from '../vault-input';
import { VAULT_ITEM_FIELDS_PURPOSE, VAULT_ITEM_VIEW_COLUMNS, type VaultItemView } from '../vault-view';

/**
 * Replaces all the fields of an item at once: a new sealed record, the item pointed at it and the
 * old record deleted, in one transaction. A send reads the item and its record in one statement,
 * so it sees the old fields or the new ones, never a mixture (SEC-02).
 */
export class ReplaceVaultItemFields extends Command<VaultItemView> {
  constructor(
    readonly caller: MemberCaller,
    readonly vaultId: string,
    readonly itemId: string,
    readonly fields: Readonly<Record<string, unknown>>,
  ) {
    super();
  }
}

@CommandHandler(ReplaceVaultItemFields)
export class ReplaceVaultItemFieldsHandler implements ICommandHandler<ReplaceVaultItemFields> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
  ) {}

  async execute({ caller, vaultId, itemId, fields }: ReplaceVaultItemFields): Promise<VaultItemView> {
    const checked = checkFields(fields);
    return this.db.transaction(async (tx) => {
      await vaultForChange(tx, caller, vaultId, false);
      if (!isUuid(itemId)) throw new NotFound('VaultItem');
      const old = await tx.one<{ recordId: string }>('SELECT fields_record_id AS "recordId" FROM vault_items WHERE id = $1 AND vault_id = $2 FOR UPDATE', [itemId, vaultId]);
      if (old === undefined) throw new NotFound('VaultItem');
      const recordId = await this.sealed.put(VAULT_ITEM_FIELDS_PURPOSE, checked, tx);
      const row = await tx.one<VaultItemView>(
        `UPDATE vault_items SET fields_record_id = $3, field_names = $4::jsonb, updated_at = now()
          WHERE id = $1 AND vault_id = $2 RETURNING ${VAULT_ITEM_VIEW_COLUMNS}`,
        [itemId, vaultId, recordId, JSON.stringify(Object.keys(checked))],
      );
      await tx.count('DELETE FROM sealed_records WHERE id = $1', [old.recordId]);
      // Field names only: the values never reach the audit log.
      await recordAudit(tx, {
        organizationId: caller.organizationId,
        actor: caller,
        action: 'vault-item.fields-replaced',
        target: { type: 'vault-item', id: itemId },
        details: { vaultId, name: row!.name, fieldNames: row!.fieldNames },
      });
      return row!;
    });
  }
}

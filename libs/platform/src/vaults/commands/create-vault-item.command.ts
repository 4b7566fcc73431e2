import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Conflict, newId, type MemberCaller } from '@openbot/domain';
import { recordAudit } from '../../audit/record-audit';
import { Database } from '../../database/sql';
import { SealedRecords } from '../../sealing/sealed-records';
import { checkAllowedHosts, checkFields, vaultForChange } from '../vault-input';
import { VAULT_ITEM_FIELDS_PURPOSE, VAULT_ITEM_VIEW_COLUMNS, type VaultItemView } from '../vault-view';

/**
 * Adds an item to a Vault the caller may use. Its fields are sealed together in one record, in
 * the item's transaction: a refused insert leaves no sealed value behind. `allowedHosts` is
 * required (decision 029): the values are never sent anywhere else.
 */
export class CreateVaultItem extends Command<VaultItemView> {
  constructor(
    readonly caller: MemberCaller,
    readonly vaultId: string,
    readonly name: string,
    readonly fields: Readonly<Record<string, unknown>>,
    readonly allowedHosts: readonly unknown[],
  ) {
    super();
  }
}

@CommandHandler(CreateVaultItem)
export class CreateVaultItemHandler implements ICommandHandler<CreateVaultItem> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
  ) {}

  async execute({ caller, vaultId, name, fields, allowedHosts }: CreateVaultItem): Promise<VaultItemView> {
    const checked = checkFields(fields);
    const hosts = checkAllowedHosts(allowedHosts);
    return this.db.transaction(async (tx) => {
      await vaultForChange(tx, caller, vaultId, true);
      const recordId = await this.sealed.put(VAULT_ITEM_FIELDS_PURPOSE, checked, tx);
      const row = await tx.one<VaultItemView>(
        `INSERT INTO vault_items (id, organization_id, vault_id, name, field_names, allowed_hosts, fields_record_id)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7)
         ON CONFLICT (vault_id, name) DO NOTHING RETURNING ${VAULT_ITEM_VIEW_COLUMNS}`,
        [newId(), caller.organizationId, vaultId, name, JSON.stringify(Object.keys(checked)), JSON.stringify(hosts), recordId],
      );
      // Throwing rolls the sealed record back with the transaction.
      if (row === undefined) throw new Conflict('VaultItemNameTaken', `This Vault already has an item named "${name}".`);
      // Names only: the values never reach the audit log.
      await recordAudit(tx, {
        organizationId: caller.organizationId,
        actor: caller,
        action: 'vault-item.created',
        target: { type: 'vault-item', id: row.id },
        details: { vaultId, name: row.name, fieldNames: row.fieldNames, allowedHosts: row.allowedHosts },
      });
      return row;
    });
  }
}

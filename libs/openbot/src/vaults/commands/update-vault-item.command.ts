import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Conflict, isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';
import { checkAllowedHosts, vaultForChange } from '../vault-input';
import { VAULT_ITEM_VIEW_COLUMNS, type VaultItemView } from '../vault-view';

/** What a PATCH of an item may change; its fields change only as a whole (ReplaceVaultItemFields). */
export interface VaultItemChanges {
  readonly name?: string;
  readonly allowedHosts?: readonly unknown[];
}

/**
 * Renames an item or changes its `allowedHosts`. The ID stays, and so every reference to it
 * (SEC-02). A narrower `allowedHosts` takes effect at the next send of every reference.
 */
export class UpdateVaultItem extends Command<VaultItemView> {
  constructor(
    readonly caller: MemberCaller,
    readonly vaultId: string,
    readonly itemId: string,
    readonly changes: VaultItemChanges,
  ) {
    super();
  }
}

@CommandHandler(UpdateVaultItem)
export class UpdateVaultItemHandler implements ICommandHandler<UpdateVaultItem> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, vaultId, itemId, changes }: UpdateVaultItem): Promise<VaultItemView> {
    const hosts = changes.allowedHosts === undefined ? null : checkAllowedHosts(changes.allowedHosts);
    return this.db.transaction(async (tx) => {
      await vaultForChange(tx, caller, vaultId, false);
      if (!isUuid(itemId)) throw new NotFound('VaultItem');
      const found = await tx.count('SELECT 1 FROM vault_items WHERE id = $1 AND vault_id = $2 FOR UPDATE', [itemId, vaultId]);
      if (found === 0) throw new NotFound('VaultItem');
      if (changes.name !== undefined) {
        const taken = await tx.count('SELECT 1 FROM vault_items WHERE vault_id = $1 AND name = $2 AND id <> $3', [vaultId, changes.name, itemId]);
        if (taken > 0) throw new Conflict('VaultItemNameTaken', `This Vault already has an item named "${changes.name}".`);
      }
      const row = await tx.one<VaultItemView>(
        `UPDATE vault_items SET name = COALESCE($3, name), allowed_hosts = COALESCE($4::jsonb, allowed_hosts), updated_at = now()
          WHERE id = $1 AND vault_id = $2 RETURNING ${VAULT_ITEM_VIEW_COLUMNS}`,
        [itemId, vaultId, changes.name ?? null, hosts === null ? null : JSON.stringify(hosts)],
      );
      return row!;
    });
  }
}

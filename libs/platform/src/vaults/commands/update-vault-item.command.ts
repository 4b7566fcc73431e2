import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Conflict, Forbidden, hostsBeyond, isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { recordAudit } from '../../audit/record-audit';
import { Database } from '../../database/sql';
import { checkAllowedHosts, vaultForChange } from '../vault-input';
import { mayManageVault } from '../vault-rights';
import { VAULT_ITEM_VIEW_COLUMNS, type VaultItemView } from '../vault-view';

/** What a PATCH of an item may change; its fields change only as a whole (ReplaceVaultItemFields). */
export interface VaultItemChanges {
  readonly name?: string;
  readonly allowedHosts?: readonly unknown[];
}

/**
 * Renames an item or changes its `allowedHosts`. The ID stays, and so every reference to it
 * (SEC-02). A narrower `allowedHosts` takes effect at the next send of every reference. Any
 * Vault user may keep or narrow the hosts; adding a host the item did not admit sends its values
 * somewhere new and needs the Vault's manage right (owners and admins with `vaults.use`,
 * decision 068): 403 otherwise. Audited with the names and hosts, never a value.
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
      const found = await tx.one<{ name: string; allowedHosts: string[] }>(
        'SELECT name, allowed_hosts AS "allowedHosts" FROM vault_items WHERE id = $1 AND vault_id = $2 FOR UPDATE',
        [itemId, vaultId],
      );
      if (found === undefined) throw new NotFound('VaultItem');
      const added = hosts === null ? [] : hostsBeyond(found.allowedHosts, hosts);
      if (added.length > 0 && !mayManageVault(caller)) {
        throw new Forbidden(`Adding ${added.join(', ')} to allowedHosts sends this item's values somewhere new: only owners and admins with vaults.use may widen it.`);
      }
      if (changes.name !== undefined) {
        const taken = await tx.count('SELECT 1 FROM vault_items WHERE vault_id = $1 AND name = $2 AND id <> $3', [vaultId, changes.name, itemId]);
        if (taken > 0) throw new Conflict('VaultItemNameTaken', `This Vault already has an item named "${changes.name}".`);
      }
      const row = await tx.one<VaultItemView>(
        `UPDATE vault_items SET name = COALESCE($3, name), allowed_hosts = COALESCE($4::jsonb, allowed_hosts), updated_at = now()
          WHERE id = $1 AND vault_id = $2 RETURNING ${VAULT_ITEM_VIEW_COLUMNS}`,
        [itemId, vaultId, changes.name ?? null, hosts === null ? null : JSON.stringify(hosts)],
      );
      const changed = {
        ...(row!.name !== found.name ? { name: { from: found.name, to: row!.name } } : {}),
        ...(hosts !== null && !sameHosts(found.allowedHosts, row!.allowedHosts) ? { allowedHosts: { from: found.allowedHosts, to: row!.allowedHosts, added } } : {}),
      };
      if (Object.keys(changed).length > 0) {
        await recordAudit(tx, { organizationId: caller.organizationId, actor: caller, action: 'vault-item.updated', target: { type: 'vault-item', id: itemId }, details: { vaultId, ...changed } });
      }
      return row!;
    });
  }
}

function sameHosts(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((host) => b.includes(host));
}

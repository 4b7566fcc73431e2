import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Forbidden, InvalidInput, isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { recordAudit } from '../../audit/record-audit';
import { Database } from '../../database/sql';
import { mayManageVault } from '../vault-rights';

export interface VaultUsersView {
  readonly vaultId: string;
  readonly memberIds: readonly string[];
}

/**
 * Replaces the members a Vault grants `vaults.use` to (owners and admins hold it on every Vault
 * and need no grant). Only owners and admins may grant, and only with a credential that holds
 * `vaults.use` itself (IDN-02): a member cannot widen their own rights, nor a narrowed key anyone's.
 * Every ID must be a current member of the organization (400 on `memberIds.N`).
 */
export class SetVaultUsers extends Command<VaultUsersView> {
  constructor(
    readonly caller: MemberCaller,
    readonly vaultId: string,
    readonly memberIds: readonly string[],
  ) {
    super();
  }
}

@CommandHandler(SetVaultUsers)
export class SetVaultUsersHandler implements ICommandHandler<SetVaultUsers> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, vaultId, memberIds }: SetVaultUsers): Promise<VaultUsersView> {
    if (!isUuid(vaultId)) throw new NotFound('Vault');
    const wanted = [...new Set(memberIds.map((id) => id.toLowerCase()))];
    return this.db.transaction(async (tx) => {
      const found = await tx.count('SELECT 1 FROM vaults WHERE id = $1 AND organization_id = $2 FOR UPDATE', [vaultId, caller.organizationId]);
      if (found === 0) throw new NotFound('Vault');
      if (!mayManageVault(caller)) throw new Forbidden('Only owners and admins, with vaults.use in this credential, may grant vaults.use on a Vault: a credential never grants a right it lacks.');
      const valid = wanted.filter(isUuid);
      const members = await tx.rows<{ id: string }>('SELECT id FROM members WHERE organization_id = $1 AND removed_at IS NULL AND id = ANY($2::uuid[])', [caller.organizationId, valid]);
      const known = new Set(members.map((m) => m.id));
      const issues = memberIds.flatMap((id, index) => (known.has(id.toLowerCase()) ? [] : [{ path: `memberIds.${index}`, message: 'this member does not exist in this organization' }]));
      if (issues.length > 0) throw new InvalidInput(issues);
      const revoked = await tx.rows<{ id: string }>('DELETE FROM vault_users WHERE vault_id = $1 AND NOT (member_id = ANY($2::uuid[])) RETURNING member_id AS id', [vaultId, wanted]);
      const granted = await tx.rows<{ id: string }>(
        'INSERT INTO vault_users (vault_id, member_id) SELECT $1, unnest($2::uuid[]) ON CONFLICT DO NOTHING RETURNING member_id AS id',
        [vaultId, wanted],
      );
      if (granted.length > 0 || revoked.length > 0) {
        await recordAudit(tx, {
          organizationId: caller.organizationId,
          actor: caller,
          action: 'vault.users-changed',
          target: { type: 'vault', id: vaultId },
          details: { granted: granted.map((m) => m.id).sort(), revoked: revoked.map((m) => m.id).sort() },
        });
      }
      return { vaultId, memberIds: wanted.sort() };
    });
  }
}

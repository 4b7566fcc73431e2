import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Forbidden, InvalidInput, isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';

export interface VaultUsersView {
  readonly vaultId: string;
  readonly memberIds: readonly string[];
}

/**
 * Replaces the members a Vault grants `vaults.use` to (owners and admins hold it on every Vault
 * and need no grant). Only owners and admins may grant: a member cannot widen their own rights.
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
      if (caller.role !== 'owner' && caller.role !== 'admin') throw new Forbidden('Only owners and admins may grant vaults.use on a Vault.');
      const valid = wanted.filter(isUuid);
      const members = await tx.rows<{ id: string }>('SELECT id FROM members WHERE organization_id = $1 AND removed_at IS NULL AND id = ANY($2::uuid[])', [caller.organizationId, valid]);
      const known = new Set(members.map((m) => m.id));
      const issues = memberIds.flatMap((id, index) => (known.has(id.toLowerCase()) ? [] : [{ path: `memberIds.${index}`, message: 'this member does not exist in this organization' }]));
      if (issues.length > 0) throw new InvalidInput(issues);
      await tx.count('DELETE FROM vault_users WHERE vault_id = $1 AND NOT (member_id = ANY($2::uuid[]))', [vaultId, wanted]);
      await tx.count('INSERT INTO vault_users (vault_id, member_id) SELECT $1, unnest($2::uuid[]) ON CONFLICT DO NOTHING', [vaultId, wanted]);
      return { vaultId, memberIds: wanted.sort() };
    });
  }
}

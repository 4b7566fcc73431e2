import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { canManageRole, isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';
import { recordAudit } from '../../audit/record-audit';
import { LastOwner, lockMembers, MEMBER_VIEW_COLUMNS, roleChangeRefused, type MemberView } from '../member-view';

/**
 * Removes a member: its API keys are revoked and its sessions stop working at once, and its
 * running work stops at its next identity check (IDN-06). The row stays (removed_at) so past
 * work and audit records keep pointing at it.
 */
export class RemoveMember extends Command<MemberView> {
  constructor(
    readonly caller: MemberCaller,
    readonly memberId: string,
  ) {
    super();
  }
}

@CommandHandler(RemoveMember)
export class RemoveMemberHandler implements ICommandHandler<RemoveMember> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, memberId }: RemoveMember): Promise<MemberView> {
    if (!isUuid(memberId)) throw new NotFound('Member');
    return this.db.transaction(async (tx) => {
      const { target, owners } = await lockMembers(tx, caller.organizationId, memberId);
      if (!canManageRole(caller.role, target.role)) throw roleChangeRefused(target.role);
      if (target.role === 'owner' && owners === 1) throw new LastOwner();
      const member = await tx.one<MemberView>(`UPDATE members SET removed_at = now() WHERE id = $1 RETURNING ${MEMBER_VIEW_COLUMNS}`, [memberId]);
      await tx.count('UPDATE api_keys SET revoked_at = now() WHERE member_id = $1 AND revoked_at IS NULL', [memberId]);
      await recordAudit(tx, { organizationId: caller.organizationId, actor: caller, action: 'member.removed', target: { type: 'member', id: memberId }, details: { role: target.role } });
      return member!;
    });
  }
}

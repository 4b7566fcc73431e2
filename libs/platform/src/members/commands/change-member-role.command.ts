import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { canManageRole, isUuid, NotFound, type MemberCaller, type MemberRole } from '@openbot/domain';
import { Database } from '../../database/sql';
import { recordAudit } from '../../audit/record-audit';
import { LastOwner, lockMembers, MEMBER_VIEW_COLUMNS, roleChangeRefused, roleGrantRefused, type MemberView } from '../member-view';

/**
 * Changes a member's role. The new rights apply to the member's next request and to its
 * running work at its next check (keys carry scopes, not copies of the role). The calling
 * credential must hold every permission of the new role (IDN-02).
 */
export class ChangeMemberRole extends Command<MemberView> {
  constructor(
    readonly caller: MemberCaller,
    readonly memberId: string,
    readonly role: MemberRole,
  ) {
    super();
  }
}

@CommandHandler(ChangeMemberRole)
export class ChangeMemberRoleHandler implements ICommandHandler<ChangeMemberRole> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, memberId, role }: ChangeMemberRole): Promise<MemberView> {
    if (!isUuid(memberId)) throw new NotFound('Member');
    return this.db.transaction(async (tx) => {
      const { target, owners } = await lockMembers(tx, caller.organizationId, memberId);
      if (!canManageRole(caller.role, target.role) || !canManageRole(caller.role, role)) throw roleChangeRefused(target.role === 'owner' ? 'owner' : role);
      if (target.role === 'owner' && role !== 'owner' && owners === 1) throw new LastOwner();
      const refused = roleGrantRefused(caller, role);
      if (refused !== null) throw refused;
      const member = await tx.one<MemberView>(`UPDATE members SET role = $2 WHERE id = $1 RETURNING ${MEMBER_VIEW_COLUMNS}`, [memberId, role]);
      if (target.role !== role) {
        await recordAudit(tx, { organizationId: caller.organizationId, actor: caller, action: 'member.role-changed', target: { type: 'member', id: memberId }, details: { from: target.role, to: role } });
      }
      return member!;
    });
  }
}

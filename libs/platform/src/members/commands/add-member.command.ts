import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { canManageRole, newId, type ApiKeyId, type MemberCaller, type MemberId, type MemberRole } from '@openbot/domain';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../config/runtime-config';
import { Database } from '../../database/sql';
import { checkRoomFor } from '../../limits/organization-limits';
import { generateSecret, hashSecret } from '../../identity/api-key-secret';
import { recordAudit } from '../../audit/record-audit';
import { MEMBER_VIEW_COLUMNS, roleChangeRefused, roleGrantRefused, type MemberView } from '../member-view';

export interface AddedMember {
  readonly member: MemberView;
  /** The new member's first API key; its secret is shown once. */
  readonly apiKey: { readonly id: ApiKeyId; readonly name: string; readonly secret: string };
}

/**
 * Adds a member with a role and a first API key (SSO members are added on their first login
 * instead). Owners and admins may add members; only an owner may add an owner; and the calling
 * credential must hold every permission of the role it hands out (IDN-02). The first key counts
 * toward the organization's `apiKeys` limit (decision 076): past it, 409 LimitReached.
 */
export class AddMember extends Command<AddedMember> {
  constructor(
    readonly caller: MemberCaller,
    readonly role: MemberRole,
    readonly name: string | null,
  ) {
    super();
  }
}

@CommandHandler(AddMember)
export class AddMemberHandler implements ICommandHandler<AddMember> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  async execute({ caller, role, name }: AddMember): Promise<AddedMember> {
    if (!canManageRole(caller.role, role)) throw roleChangeRefused(role);
    // The first key is unscoped (the new member's whole role), so the caller must hold that role's rights itself.
    const refused = roleGrantRefused(caller, role);
    if (refused !== null) throw refused;
    const memberId = newId<MemberId>();
    const apiKeyId = newId<ApiKeyId>();
    const secret = generateSecret(apiKeyId);
    const keyName = 'First key';
    return this.db.transaction(async (tx) => {
      await checkRoomFor(tx, caller.organizationId, this.config.organizationLimits, 'apiKeys');
      const member = await tx.one<MemberView>(
        `INSERT INTO members (id, organization_id, role, name) VALUES ($1, $2, $3, $4) RETURNING ${MEMBER_VIEW_COLUMNS}`,
        [memberId, caller.organizationId, role, name],
      );
      await tx.count(
        `INSERT INTO api_keys (id, organization_id, member_id, name, secret_hash) VALUES ($1, $2, $3, $4, $5)`,
        [apiKeyId, caller.organizationId, memberId, keyName, hashSecret(secret)],
      );
      await recordAudit(tx, { organizationId: caller.organizationId, actor: caller, action: 'member.added', target: { type: 'member', id: memberId }, details: { role } });
      return { member: member!, apiKey: { id: apiKeyId, name: keyName, secret } };
    });
  }
}

import { Conflict, Forbidden, missingForRole, NotFound, type MemberCaller, type MemberId, type MemberRole } from '@openbot/domain';
import type { Sql } from '../database/sql';

/** What the API may show of a member. */
export interface MemberView {
  readonly id: MemberId;
  readonly role: MemberRole;
  readonly name: string | null;
  readonly email: string | null;
  readonly createdAt: Date;
}

export const MEMBER_VIEW_COLUMNS = `id, role, name, email, created_at AS "createdAt"`;

/** An organization always keeps one owner: the last one cannot be demoted or removed. */
export class LastOwner extends Conflict {
  constructor() {
    super('LastOwner', 'An organization keeps at least one owner; make another member owner first.');
  }
}

/** Admins manage admins, members and viewers; only an owner makes, changes or removes an owner. */
export function roleChangeRefused(target: MemberRole): Forbidden {
  return new Forbidden(`Only an owner may ${target === 'owner' ? 'manage owners' : 'do this'}.`);
}

/**
 * A member can be given `role` only by a credential holding every permission of that role
 * (IDN-02): a key scoped to `members.manage` alone adds or promotes no one. Null: allowed.
 */
export function roleGrantRefused(caller: MemberCaller, role: MemberRole): Forbidden | null {
  const missing = missingForRole(caller.permissions, role);
  if (missing.length === 0) return null;
  return new Forbidden(`Giving the role "${role}" needs every permission of that role; this ${caller.apiKeyId ? 'API key' : 'session'} lacks ${missing.map((p) => `"${p}"`).join(', ')}.`);
}

/**
 * Locks the organization's current members in one order (so two changes cannot both pass the
 * owner count) and answers them with the target member; a removed, unknown or foreign one is NotFound.
 */
export async function lockMembers(
  tx: Sql,
  organizationId: string,
  memberId: string,
): Promise<{ members: Array<{ id: string; role: MemberRole }>; target: { id: string; role: MemberRole }; owners: number }> {
  const members = await tx.rows<{ id: string; role: MemberRole }>(
    `SELECT id, role FROM members WHERE organization_id = $1 AND removed_at IS NULL ORDER BY id FOR UPDATE`,
    [organizationId],
  );
  const target = members.find((m) => m.id === memberId);
  if (target === undefined) throw new NotFound('Member');
  return { members, target, owners: members.filter((m) => m.role === 'owner').length };
}

import { Conflict, Forbidden, type MemberId, type MemberRole } from '@openbot/domain';

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

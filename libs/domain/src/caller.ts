import type { ApiKeyId, MemberId, OrganizationId } from './ids';
import type { MemberRole } from './roles';

/** Who is asking. Use cases take this, never a raw credential or a string prefix (IDN-04). */
export type Caller = PlatformAdmin | MemberCaller;

export interface PlatformAdmin {
  readonly kind: 'platform-admin';
}

export interface MemberCaller {
  readonly kind: 'member';
  readonly organizationId: OrganizationId;
  readonly memberId: MemberId;
  readonly role: MemberRole;
  /** The key that authenticated this request; null for a session cookie (later). */
  readonly apiKeyId: ApiKeyId | null;
}

/** Owners and admins manage every key of their organization; members only their own. */
export function canManageAllApiKeys(caller: MemberCaller): boolean {
  return caller.role === 'owner' || caller.role === 'admin';
}

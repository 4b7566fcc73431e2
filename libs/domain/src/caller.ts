import type { ApiKeyId, MemberId, OrganizationId } from './ids';
import type { MemberRole, Permission } from './roles';

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
  /** The key that authenticated this request; null for a session cookie. */
  readonly apiKeyId: ApiKeyId | null;
  /** The SSO session that authenticated this request; null for an API key. */
  readonly sessionId?: string | null;
  /** What this request may do: the role's permissions narrowed by the key's scopes. */
  readonly permissions: readonly Permission[];
}

export function can(caller: MemberCaller, permission: Permission): boolean {
  return caller.permissions.includes(permission);
}

/** Owners and admins manage every key of their organization; members only their own. */
export function canManageAllApiKeys(caller: MemberCaller): boolean {
  return caller.role === 'owner' || caller.role === 'admin';
}

/**
 * Whether the caller may write into work another member started (a Turn's tool outputs, an
 * outcome_unknown decision): owners and admins only. Anyone else may steer only its own work,
 * which then goes on acting under that member's identity.
 */
export function canSteerOthersWork(caller: MemberCaller): boolean {
  return caller.role === 'owner' || caller.role === 'admin';
}

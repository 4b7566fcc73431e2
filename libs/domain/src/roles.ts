/**
 * Member roles inside an organization and what each may do. A request's rights are its role's
 * permissions, narrowed by the API key's scopes when the key has any (a key never widens them).
 */
export const MEMBER_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export const PERMISSIONS = [
  'organization.read',
  'members.read',
  'members.manage',
  'api-keys.manage',
  'models.read',
  'models.write',
  'bots.read',
  'bots.write',
  'chats.read',
  'chats.write',
  'files.read',
  'files.write',
  'executions.read',
  'executions.write',
  'approvals.decide',
  'usage.read',
  'audit.read',
  'sso.manage',
  'billing.manage',
  'vaults.read',
  'vaults.write',
  'vaults.use',
  'apps.read',
  'apps.write',
  'apps.manage',
  'retention.manage',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const READ: readonly Permission[] = ['organization.read', 'members.read', 'models.read', 'bots.read', 'chats.read', 'files.read', 'executions.read', 'usage.read', 'vaults.read', 'apps.read'];
/**
 * `vaults.use` lets a member name references to the Vaults that grant it to them (owners and
 * admins: every Vault of the organization); the permission alone opens no Vault (decision 029).
 */
const WORK: readonly Permission[] = [...READ, 'api-keys.manage', 'bots.write', 'chats.write', 'files.write', 'executions.write', 'approvals.decide', 'vaults.write', 'vaults.use', 'apps.write'];

/** What each role may do; `viewer` is read-only (its own API keys included: it may create none). */
export const ROLE_PERMISSIONS: Readonly<Record<MemberRole, readonly Permission[]>> = {
  viewer: READ,
  member: WORK,
  admin: [...WORK, 'members.manage', 'models.write', 'audit.read', 'sso.manage', 'billing.manage', 'apps.manage', 'retention.manage'],
  owner: [...WORK, 'members.manage', 'models.write', 'audit.read', 'sso.manage', 'billing.manage', 'apps.manage', 'retention.manage'],
};

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

export function isMemberRole(value: string): value is MemberRole {
  return (MEMBER_ROLES as readonly string[]).includes(value);
}

/**
 * The roles `role` includes: itself and every role below it in MEMBER_ROLES (an owner holds
 * everything an admin holds, an admin what a member holds, a member what a viewer holds). What is
 * given to a role is given to the roles above it too (decision 085).
 */
export function includedRoles(role: MemberRole): readonly MemberRole[] {
  return MEMBER_ROLES.slice(MEMBER_ROLES.indexOf(role));
}

/** A role's permissions narrowed to a key's scopes (`null`: the key has the role's full rights). */
export function effectivePermissions(role: MemberRole, scopes: readonly string[] | null): readonly Permission[] {
  const granted = ROLE_PERMISSIONS[role];
  return scopes === null ? granted : granted.filter((permission) => scopes.includes(permission));
}

/** Owners and admins manage members; only an owner may make, change or remove an owner. */
export function canManageRole(actor: MemberRole, target: MemberRole): boolean {
  if (actor === 'owner') return true;
  return actor === 'admin' && target !== 'owner';
}

/**
 * The permissions of `role` a credential with `permissions` lacks. A credential may hand out a
 * role (add a member with it, or change a member to it) only when this is empty, so a narrowed
 * key can never mint rights it lacks through another member (IDN-02).
 */
export function missingForRole(permissions: readonly Permission[], role: MemberRole): Permission[] {
  return ROLE_PERMISSIONS[role].filter((permission) => !permissions.includes(permission));
}

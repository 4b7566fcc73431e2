import { ROLE_PERMISSIONS, can, isMemberRole, type MemberCaller } from '@openbot/domain';

/**
 * Who may use a Vault (name its references, write its items, have its values sent for their work):
 * owners and admins on every Vault, a member whose role carries `vaults.use` on the Vaults that
 * grant it to them (`vault_users`). Answered from the member's current row, never a cached role.
 */
export function mayUseVault(member: { readonly role: string | null; readonly granted: boolean } | null): boolean {
  if (member === null || member.role === null || !isMemberRole(member.role)) return false;
  if (!ROLE_PERMISSIONS[member.role].includes('vaults.use')) return false;
  return member.role === 'owner' || member.role === 'admin' || member.granted;
}

/**
 * SQL answering `role` and `granted` of member `$member` for the Vault `vaultIdSql`, within the
 * organization `$org`: null role for a removed member or one of another organization.
 */
export function memberRightsSql(vaultIdSql: string, orgParam: string, memberParam: string): string {
  return `(SELECT m.role FROM members m WHERE m.id = ${memberParam}::uuid AND m.organization_id = ${orgParam}::uuid AND m.removed_at IS NULL) AS role,
          EXISTS (SELECT 1 FROM vault_users u WHERE u.vault_id = ${vaultIdSql} AND u.member_id = ${memberParam}::uuid) AS granted`;
}

/**
 * Who manages a Vault: grants `vaults.use` on it and widens an item's `allowedHosts` (sends its
 * values to hosts they were not bound to). Owners and admins, whose credential holds `vaults.use`
 * itself: a credential never grants a right it lacks (IDN-02), and a member who may only use a
 * Vault never moves its secrets elsewhere (decision 068).
 */
export function mayManageVault(caller: MemberCaller): boolean {
  return (caller.role === 'owner' || caller.role === 'admin') && can(caller, 'vaults.use');
}

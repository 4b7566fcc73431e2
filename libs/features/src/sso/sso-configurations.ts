import { can, Forbidden, ROLE_PERMISSIONS, type MemberCaller, type Permission, type SealedRecordId } from '@openbot/domain';
import type { Sql } from '../../../platform/src/database/sql';
import type { SealedRecords } from '../../../platform/src/sealing/sealed-records';
import { SSO_CLIENT_SECRET_PURPOSE, type SsoDefaultRole } from './sso-view';

/** What sign-in needs of an organization's active configuration (never shown by the API). */
export interface ActiveSsoConfiguration {
  readonly organizationId: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecretRecordId: string;
  readonly allowedDomains: readonly string[];
  readonly defaultRole: SsoDefaultRole;
  readonly revision: number;
}

/** The active configuration of an organization, or undefined when SSO is off. */
export async function activeConfiguration(db: Sql, organizationId: string): Promise<ActiveSsoConfiguration | undefined> {
  return db.one<ActiveSsoConfiguration>(
    `SELECT organization_id AS "organizationId", issuer, client_id AS "clientId", client_secret_record_id AS "clientSecretRecordId",
            allowed_domains AS "allowedDomains", default_role AS "defaultRole", revision
       FROM sso_configurations WHERE organization_id = $1 AND deleted_at IS NULL AND client_secret_record_id IS NOT NULL`,
    [organizationId],
  );
}

/** Opens the sealed client secret of a configuration. */
export async function openClientSecret(sealedRecords: SealedRecords, configuration: ActiveSsoConfiguration): Promise<string> {
  const record = await sealedRecords.get(configuration.clientSecretRecordId as SealedRecordId);
  if (record === null || record.purpose !== SSO_CLIENT_SECRET_PURPOSE || typeof record.value !== 'string') {
    throw new Error(`sealed client secret of organization ${configuration.organizationId} is missing or not a secret`);
  }
  return record.value;
}

/** Route access already asks for `sso.manage`; the use case checks again so no other entry skips it. */
export function requireSsoManage(caller: MemberCaller): void {
  if (!can(caller, 'sso.manage')) throw new Forbidden('Managing single sign-on needs the "sso.manage" permission.');
}

/**
 * The default role goes to everyone the provider vouches for at their first sign-in, so setting
 * it is a role grant (IDN-02): the credential needs `members.manage` and every permission of that
 * role, as when it adds a member with the role. Without this, a key scoped to `sso.manage` alone
 * pointed SSO at a provider it controls with `defaultRole: admin` and signed in as a new admin.
 */
export function requireDefaultRoleGrant(caller: MemberCaller, defaultRole: SsoDefaultRole): void {
  const missing = [...new Set<Permission>(['members.manage', ...ROLE_PERMISSIONS[defaultRole]])].filter((permission) => !can(caller, permission));
  if (missing.length === 0) return;
  throw new Forbidden(
    `Setting defaultRole "${defaultRole}" grants that role to every first sign-in: it needs "members.manage" and every permission of the role; ` +
      `this ${caller.apiKeyId !== null ? 'API key' : 'session'} lacks ${missing.map((p) => `"${p}"`).join(', ')}.`,
  );
}

/** Serializes configuration changes of one organization (the replaced secret must be the one deleted). */
export async function lockConfiguration(tx: Sql, organizationId: string): Promise<void> {
  await tx.count(`SELECT pg_advisory_xact_lock(hashtextextended('sso-configuration:' || $1, 0))`, [organizationId]);
}

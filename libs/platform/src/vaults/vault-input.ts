import { allowedHostProblem, Forbidden, InvalidInput, isUuid, NotFound, can, type InputIssue, type MemberCaller } from '@openbot/domain';
import type { Sql } from '../database/sql';
import { FIELD_NAME } from './vault-view';
import { memberRightsSql, mayUseVault } from './vault-rights';

export const MAX_FIELDS = 50;
export const MAX_FIELD_VALUE = 16_384;
export const MAX_ALLOWED_HOSTS = 50;

/** An item's fields: 1 to 50 names matching FIELD_NAME, each a string of 1 to 16,384 characters. */
export function checkFields(fields: Readonly<Record<string, unknown>>): Record<string, string> {
  const names = Object.keys(fields);
  const issues: InputIssue[] = [];
  if (names.length === 0 || names.length > MAX_FIELDS) issues.push({ path: 'fields', message: `fields must have 1 to ${MAX_FIELDS} entries` });
  for (const name of names) {
    const value = fields[name];
    if (!FIELD_NAME.test(name)) issues.push({ path: `fields.${name}`, message: 'field names are 1 to 100 letters, digits, "_", "-" or "."' });
    // The message never repeats the value: it may be the secret.
    else if (typeof value !== 'string' || value.length === 0 || value.length > MAX_FIELD_VALUE) issues.push({ path: `fields.${name}`, message: `each field must be a string of 1 to ${MAX_FIELD_VALUE} characters` });
  }
  if (issues.length > 0) throw new InvalidInput(issues);
  return Object.fromEntries(names.sort().map((name) => [name, fields[name] as string]));
}

/** `allowedHosts`: 1 to 50 host patterns (vault-hosts.ts), stored lower case. */
export function checkAllowedHosts(hosts: readonly unknown[]): string[] {
  const issues: InputIssue[] = [];
  if (hosts.length === 0 || hosts.length > MAX_ALLOWED_HOSTS) issues.push({ path: 'allowedHosts', message: `allowedHosts must name 1 to ${MAX_ALLOWED_HOSTS} hosts` });
  hosts.forEach((host, index) => {
    const problem = typeof host === 'string' ? allowedHostProblem(host) : 'must be a string';
    if (problem !== null) issues.push({ path: `allowedHosts.${index}`, message: `allowedHosts.${index} ${problem}` });
  });
  if (issues.length > 0) throw new InvalidInput(issues);
  return [...new Set((hosts as string[]).map((host) => host.toLowerCase()))];
}

/**
 * The Vault `vaultId` of the caller's organization, checked for a change: another
 * organization's or an unknown ID is NotFound (IDN-08); a caller who may not use it (no
 * `vaults.use` on it) is Forbidden. `lock` takes the Vault's row for the transaction.
 */
export async function vaultForChange(db: Sql, caller: MemberCaller, vaultId: string, lock: boolean): Promise<void> {
  if (!isUuid(vaultId)) throw new NotFound('Vault');
  const row = await db.one<{ role: string | null; granted: boolean }>(
    `SELECT ${memberRightsSql('v.id', '$2', '$3')} FROM vaults v WHERE v.id = $1 AND v.organization_id = $2${lock ? ' FOR UPDATE OF v' : ''}`,
    [vaultId, caller.organizationId, caller.memberId],
  );
  if (row === undefined) throw new NotFound('Vault');
  if (!can(caller, 'vaults.use') || !mayUseVault(row)) {
    throw new Forbidden('Only owners, admins and members this Vault grants vaults.use to may change it or its items.');
  }
}

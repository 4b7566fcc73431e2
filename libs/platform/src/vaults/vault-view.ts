import type { InputIssue } from '@openbot/domain';

/** The sealed record purpose of an item's fields: one JSON object `{ <field>: <secret> }` (SEC-01). */
export const VAULT_ITEM_FIELDS_PURPOSE = 'vault-item.fields';

/** What the API may show of a Vault. */
export interface VaultView {
  readonly id: string;
  readonly name: string;
  readonly createdAt: Date;
}

/** What the API may show of an item: its field names, never a value (decision 029). */
export interface VaultItemView {
  readonly id: string;
  readonly vaultId: string;
  readonly name: string;
  readonly fieldNames: readonly string[];
  readonly allowedHosts: readonly string[];
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export const VAULT_VIEW_COLUMNS = `id, name, created_at AS "createdAt"`;
export const VAULT_ITEM_VIEW_COLUMNS = `id, vault_id AS "vaultId", name, field_names AS "fieldNames", allowed_hosts AS "allowedHosts", created_at AS "createdAt", updated_at AS "updatedAt"`;

/**
 * A reference to one field of one Vault item, bound to the item's ID (SEC-02): renaming the item
 * keeps it, and a new item with the old name is another ID, so it never replaces it. `prefix` is
 * put before the value when it is sent (`Bearer `).
 */
export interface VaultReference {
  readonly vaultItemId: string;
  readonly field: string;
  readonly prefix?: string;
}

/** Field names: letters, digits, `_`, `-` and `.`, at most 100. */
export const FIELD_NAME = /^[A-Za-z0-9_.-]{1,100}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_PREFIX = 100;

/** Whether a JSON value has the shape of a reference (the checks of `referenceIssues` aside). */
export function isVaultReference(value: unknown): value is VaultReference {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && 'vaultItemId' in value;
}

/** What is wrong with a reference's shape at `path`; empty when it is well formed. */
export function referenceIssues(value: unknown, path: string): InputIssue[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [{ path, message: 'must be a Vault reference { vaultItemId, field, prefix? }' }];
  const issues: InputIssue[] = [];
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key !== 'vaultItemId' && key !== 'field' && key !== 'prefix') issues.push({ path: `${path}.${key}`, message: `property ${key} should not exist` });
  }
  if (typeof record.vaultItemId !== 'string' || !UUID.test(record.vaultItemId)) issues.push({ path: `${path}.vaultItemId`, message: 'vaultItemId must be the UUID of a Vault item' });
  if (typeof record.field !== 'string' || !FIELD_NAME.test(record.field)) issues.push({ path: `${path}.field`, message: 'field must name a field of the item' });
  if (record.prefix !== undefined && (typeof record.prefix !== 'string' || record.prefix.length > MAX_PREFIX || /[\r\n]/.test(record.prefix))) {
    issues.push({ path: `${path}.prefix`, message: `prefix must be a string of at most ${MAX_PREFIX} characters on one line` });
  }
  return issues;
}

/** A reference as stored and answered: exactly its three fields. */
export function storedReference(value: VaultReference): VaultReference {
  return { vaultItemId: value.vaultItemId.toLowerCase(), field: value.field, ...(value.prefix !== undefined ? { prefix: value.prefix } : {}) };
}

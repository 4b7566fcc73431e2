import type { Remote } from '@openbot/protocol';

/** What the API may show of an App. */
export interface AppView {
  readonly id: string;
  readonly url: string;
  readonly name: string;
  readonly title: string | null;
  readonly description: string | null;
  readonly version: string | null;
  readonly card: boolean;
  readonly remotes: readonly Remote[];
  readonly createdAt: Date;
}

export const APP_VIEW_COLUMNS = `id, url, name, title, description, version, card, remotes, created_at AS "createdAt"`;

export const CONNECTION_OWNERS = ['organization', 'member'] as const;
export type ConnectionOwner = (typeof CONNECTION_OWNERS)[number];

export const CONNECTION_STATES = ['ready', 'needs_authorization', 'failed'] as const;
export type ConnectionState = (typeof CONNECTION_STATES)[number];

/**
 * A header or variable value as stored and answered: a Vault reference as given, or null for a
 * literal value (kept sealed, never answered).
 */
export type StoredValue = null | { readonly vaultItemId: string; readonly field: string; readonly prefix?: string };

/** What the API may show of a connection (never a literal value). */
export interface ConnectionView {
  readonly id: string;
  readonly appId: string;
  readonly owner: ConnectionOwner;
  readonly memberId: string | null;
  readonly remote: string;
  readonly variables: Readonly<Record<string, StoredValue>>;
  readonly headers: Readonly<Record<string, StoredValue>>;
  readonly state: ConnectionState;
  readonly revision: number;
  readonly era: 'legacy' | 'modern' | null;
  readonly protocolVersion: string | null;
  readonly warnings: readonly string[];
  readonly category: string | null;
  readonly errorId: string | null;
  readonly checkedAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export const CONNECTION_VIEW_COLUMNS = `id, app_id AS "appId", owner, member_id AS "memberId", remote, variables, headers, state, revision,
  era, protocol_version AS "protocolVersion", warnings, category, error_id AS "errorId", checked_at AS "checkedAt",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

/**
 * The WHERE clause that limits connections to those the caller may see: its organization's, not
 * being deleted, and a member connection only for its member, owners and admins. `$1` is the
 * organization, `$2` the member, `$3` whether the caller is an owner or admin.
 */
export const VISIBLE_CONNECTION = `organization_id = $1 AND deleting_at IS NULL AND (owner = 'organization' OR member_id = $2 OR $3::boolean)`;

/**
 * Whether a member may use a connection (IDN-05): in a Bot's declared tools and in a Turn's App
 * call, live or restored, alike. The organization's connections, and a member's own only for that
 * member. Narrower than seeing (`VISIBLE_CONNECTION`): owners and admins see, not use, others' own.
 */
export function mayUseConnection(connection: { readonly owner: string; readonly member_id: string | null }, memberId: string | null): boolean {
  return connection.owner === 'organization' || (memberId !== null && connection.member_id === memberId);
}

/** Sealed-record purpose of a connection's literal header and variable values. */
export const CONNECTION_SECRETS_PURPOSE = 'app-connection.secrets';

/** The literal values of a connection, sealed as one record. */
export interface ConnectionSecrets {
  readonly headers: Readonly<Record<string, string>>;
  readonly variables: Readonly<Record<string, string>>;
}

/** What the grant statements need of a connection: a transaction's, or a workflow end's. */
interface Sql {
  query(sql: string, params?: unknown[]): Promise<{ readonly rows: readonly unknown[] }>;
}

/** A refresh intent older than this was left by a reply that never came (a node died, a stream broke). */
export const LOST_REFRESH_MS = 30_000;

/** A grant row as the refresh reads it under its lock; `connection_id` is its holder, a connection or a developer test (DEVT-01). */
export interface GrantRow {
  readonly id: string;
  readonly connection_id: string;
  readonly registration_id: string;
  readonly organization_id: string;
  readonly state: string;
  readonly version: number;
  readonly tokens_record_id: string;
  readonly resource: string;
  /** The refresh execution that holds the grant's one refresh (single-flight), or null. */
  readonly refresh_intent: string | null;
  readonly stale: boolean;
}

/** Locks a grant row (the refresh's single-flight and compare-and-swap are under this lock). */
export async function lockGrant(tx: Sql, grantId: string): Promise<GrantRow | undefined> {
  const { rows } = await tx.query(
    `SELECT id, coalesce(connection_id, developer_test_id) AS connection_id, registration_id, organization_id, state, version, tokens_record_id, resource, refresh_intent::text AS refresh_intent,
            refresh_intent_at < now() - make_interval(secs => $2::double precision / 1000) AS stale
       FROM app_oauth_grants WHERE id = $1 FOR UPDATE`,
    [grantId, LOST_REFRESH_MS],
  );
  return rows[0] as GrantRow | undefined;
}

/** The grant and its connection show `needs_authorization` (no silent restart): a member authorizes again. */
export async function needsAuthorization(tx: Sql, grant: Pick<GrantRow, 'id' | 'connection_id'>): Promise<void> {
  await tx.query(`UPDATE app_oauth_grants SET state = 'needs_authorization', refresh_intent = NULL, refresh_intent_at = NULL, updated_at = now() WHERE id = $1`, [grant.id]);
  await tx.query(`UPDATE app_connections SET state = 'needs_authorization', updated_at = now() WHERE id = $1`, [grant.connection_id]);
}

import { newId } from '@openbot/domain';
import { withTransaction, type Engine, type Queryable } from '@openbot/engine';
import { isOAuthFailure, McpFailure, refreshTokens, scopeUnion, type Fetch, type TokenSet } from '@openbot/protocol';
import type { Pool } from 'pg';
import type { Sealer } from '../sealing/sealer';
import type { SealedRecords } from '../sealing/sealed-records';
import { saveGrantResult, sealTokensIn, submitterIn } from './grant-cleanup-command';
import { openClient, openTokens, registrationById } from './oauth-records';

/** The access token a connection's requests carry now, and the grant version it belongs to. */
export interface GrantToken {
  readonly grantId: string;
  readonly connectionId: string;
  readonly version: number;
  readonly accessToken: string;
  readonly expiresAt: number | null;
}

/** A refresh intent older than this was left by a reply that never came (a node died, a stream broke). */
export const LOST_REFRESH_MS = 30_000;
/** How often a waiter looks again while another node refreshes the same grant. */
const WAIT_STEP_MS = 50;

interface GrantRow {
  readonly id: string;
  readonly connection_id: string;
  readonly registration_id: string;
  readonly organization_id: string;
  readonly state: string;
  readonly version: number;
  readonly tokens_record_id: string;
  readonly resource: string;
  readonly refresh_intent: string | null;
  readonly stale: boolean;
}

/**
 * The grants of connections, as App calls use them. `current` reads the installed pair; a
 * refresh is single-flight per grant across every node:
 * - under the grant's row lock it saves a refresh intent (one per grant), or finds the pair
 *   already rotated by someone else (then it uses that one, never refreshing twice);
 * - the refresh is sent outside any transaction; the rotated pair is saved by compare-and-swap
 *   on the version and the intent;
 * - `invalid_grant` is final only after a re-read shows no newer pair;
 * - a lost reply (or an intent older than LOST_REFRESH_MS) makes the grant, and its connection,
 *   `needs_authorization` explicitly: the old refresh token may be spent, and trying it again
 *   could make the server revoke the whole grant family. No silent re-authorization, no retry storm;
 * - a reply that arrives after its intent was given up is saved as an unused grant result with
 *   its cleanup command (GRANT-01).
 */
export class GrantTokens {
  private readonly inFlight = new Map<string, Promise<GrantToken>>();

  constructor(
    private readonly deps: { readonly pool: Pool; readonly sealed: SealedRecords; readonly sealer: Sealer; readonly fetch: Fetch; readonly engine: Engine; readonly now?: () => number },
  ) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /** The active grant's token of a connection (or of a developer test: `connectionId` is its holder), or null when it holds none (or needs authorization). */
  async current(connectionId: string): Promise<GrantToken | null> {
    const { rows } = await this.deps.pool.query<{ id: string; version: number; tokens_record_id: string; state: string }>({
      name: 'app-oauth.current-grant-of-holder',
      text: 'SELECT id, version, tokens_record_id, state FROM app_oauth_grants WHERE connection_id = $1 OR developer_test_id = $1',
      values: [connectionId],
    });
    const row = rows[0];
    if (row === undefined || row.state !== 'active') return null;
    const tokens = await openTokens(this.deps.sealed, row.tokens_record_id);
    return { grantId: row.id, connectionId, version: row.version, accessToken: tokens.access_token, expiresAt: tokens.expires_at };
  }

  /**
   * Records a 403 `insufficient_scope` (scope step-up): the scope it asks for joins the grant's
   * pending step-up scope, and the connection shows `needs_authorization` until a member
   * authorizes again with the union.
   */
  async stepUp(token: GrantToken, scope: string): Promise<void> {
    await withTransaction(this.deps.pool, async (tx) => {
      const { rows } = await tx.query<{ scope: string | null; step_up_scope: string | null }>('SELECT scope, step_up_scope FROM app_oauth_grants WHERE id = $1 FOR UPDATE', [token.grantId]);
      const row = rows[0];
      if (row === undefined) return;
      await tx.query('UPDATE app_oauth_grants SET step_up_scope = $2, updated_at = now() WHERE id = $1', [token.grantId, scopeUnion(row.step_up_scope, row.scope, scope)]);
      await tx.query(`UPDATE app_connections SET state = 'needs_authorization', updated_at = now() WHERE id = $1`, [token.connectionId]);
    });
  }

  /** Whether a token is about to expire (then it is refreshed before it is sent). */
  expiring(token: GrantToken): boolean {
    return token.expiresAt !== null && token.expiresAt - 30_000 <= this.now();
  }

  /** A newer token than `seen`: refreshed here (once per process and grant version), or by whoever refreshed first. */
  refreshed(seen: GrantToken): Promise<GrantToken> {
    const key = `${seen.grantId}:${seen.version}`;
    const running = this.inFlight.get(key);
    if (running !== undefined) return running;
    const work = this.refresh(seen).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, work);
    return work;
  }

  private async refresh(seen: GrantToken): Promise<GrantToken> {
    const intent = newId();
    let grant: GrantRow | null = null;
    for (let waited = 0; grant === null; waited += WAIT_STEP_MS) {
      const claim = await withTransaction(this.deps.pool, async (tx) => {
        const row = await lockGrant(tx, seen.grantId);
        if (row === undefined) return { kind: 'gone' as const };
        if (row.version !== seen.version) return { kind: 'moved' as const };
        if (row.state !== 'active') return { kind: 'needs_authorization' as const };
        if (row.refresh_intent !== null) {
          if (!row.stale) return { kind: 'wait' as const };
          await needsAuthorization(tx, row);
          return { kind: 'needs_authorization' as const };
        }
        await tx.query('UPDATE app_oauth_grants SET refresh_intent = $2, refresh_intent_at = now() WHERE id = $1', [row.id, intent]);
        return { kind: 'claimed' as const, row };
      });
      if (claim.kind === 'moved') return this.newer(seen);
      if (claim.kind === 'gone' || claim.kind === 'needs_authorization') throw new McpFailure('needs_authorization', 'the connection needs authorization again');
      if (claim.kind === 'claimed') grant = claim.row;
      else await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
      if (waited > LOST_REFRESH_MS * 2) throw new McpFailure('unreachable', 'another refresh of this grant did not finish');
    }
    const registration = (await registrationById(this.deps.pool, grant.registration_id))!;
    const client = await openClient(this.deps.sealed, registration.clientRecordId);
    const old = await openTokens(this.deps.sealed, grant.tokens_record_id);
    const claimed = grant;
    if (old.refresh_token === null) {
      await withTransaction(this.deps.pool, (tx) => needsAuthorization(tx, claimed));
      throw new McpFailure('needs_authorization', 'the grant has no refresh token; the connection needs authorization again');
    }
    let tokens: TokenSet;
    try {
      tokens = await refreshTokens(this.deps.fetch, registration.metadata, client, { refreshToken: old.refresh_token, resource: grant.resource, now: this.now() });
    } catch (error) {
      if (!isOAuthFailure(error)) throw error;
      if (error.reason === 'unreachable' || error.reason === 'refused') {
        // Nothing was granted: the intent goes, the next call may try again.
        await this.deps.pool.query('UPDATE app_oauth_grants SET refresh_intent = NULL, refresh_intent_at = NULL WHERE id = $1 AND refresh_intent = $2', [claimed.id, intent]);
        throw new McpFailure('unreachable', 'the authorization server could not refresh the grant', { cause: error });
      }
      // invalid_grant is final only when no newer pair was saved meanwhile; a lost reply is never retried with the same refresh token.
      const moved = await withTransaction(this.deps.pool, async (tx) => {
        const row = await lockGrant(tx, claimed.id);
        if (row === undefined) return false;
        if (row.version !== claimed.version) return true;
        await needsAuthorization(tx, row);
        return false;
      });
      if (moved) return this.newer(seen);
      throw new McpFailure('needs_authorization', `the grant could not be refreshed (${error.reason}); the connection needs authorization again`, { cause: error });
    }
    const saved = await withTransaction(this.deps.pool, async (tx) => {
      const tokensRecordId = await sealTokensIn(tx, this.deps.sealer, tokens);
      const { rowCount } = await tx.query(
        `UPDATE app_oauth_grants SET tokens_record_id = $4, version = version + 1, refresh_intent = NULL, refresh_intent_at = NULL, updated_at = now()
          WHERE id = $1 AND version = $2 AND refresh_intent = $3 AND state = 'active'`,
        [claimed.id, claimed.version, intent, tokensRecordId],
      );
      const installed = rowCount === 1;
      if (installed) {
        // The rotated-out pair is spent at the server: forget it.
        await tx.query('UPDATE app_oauth_grant_results SET tokens_record_id = NULL WHERE tokens_record_id = $1 AND installed_at IS NOT NULL', [claimed.tokens_record_id]);
        await tx.query('DELETE FROM sealed_records WHERE id = $1', [claimed.tokens_record_id]);
      }
      const result = await saveGrantResult(
        tx,
        submitterIn(tx, this.deps.engine),
        { callId: `refresh:${intent}`, kind: 'refresh', organizationId: claimed.organization_id, registrationId: claimed.registration_id, tokensRecordId, sourceExecutionId: null, installed },
        { held: false },
      );
      return { installed, start: result.start };
    });
    saved.start();
    if (!saved.installed) throw new McpFailure('needs_authorization', 'the refreshed grant arrived too late and went to cleanup; the connection needs authorization again');
    return { grantId: claimed.id, connectionId: claimed.connection_id, version: claimed.version + 1, accessToken: tokens.access_token, expiresAt: tokens.expires_at };
  }

  private async newer(seen: GrantToken): Promise<GrantToken> {
    const now = await this.current(seen.connectionId);
    if (now === null) throw new McpFailure('needs_authorization', 'the connection needs authorization again');
    return now;
  }
}

async function lockGrant(tx: Queryable, grantId: string): Promise<GrantRow | undefined> {
  const { rows } = await tx.query<GrantRow>(
    `SELECT id, coalesce(connection_id, developer_test_id) AS connection_id, registration_id, organization_id, state, version, tokens_record_id, resource, refresh_intent,
            refresh_intent_at < now() - make_interval(secs => $2::double precision / 1000) AS stale
       FROM app_oauth_grants WHERE id = $1 FOR UPDATE`,
    [grantId, LOST_REFRESH_MS],
  );
  return rows[0];
}

/** The grant and its connection show `needs_authorization` (no silent restart): a member authorizes again. */
async function needsAuthorization(tx: Queryable, grant: Pick<GrantRow, 'id' | 'connection_id'>): Promise<void> {
  await tx.query(`UPDATE app_oauth_grants SET state = 'needs_authorization', refresh_intent = NULL, refresh_intent_at = NULL, updated_at = now() WHERE id = $1`, [grant.id]);
  await tx.query(`UPDATE app_connections SET state = 'needs_authorization', updated_at = now() WHERE id = $1`, [grant.connection_id]);
}

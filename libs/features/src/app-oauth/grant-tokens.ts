import { identityForService } from '@openbot/domain';
import type { Engine } from '@openbot/engine';
import { McpFailure, scopeUnion } from '@openbot/protocol';
import type { Database } from '../../../platform/src/database/sql';
import { executionIdentity } from '../../../platform/src/identity/identity-codec';
import type { SealedRecords } from '../../../platform/src/sealing/sealed-records';
import { cleanupService } from './grant-cleanup-command';
import { GRANT_REFRESH, type RefreshOutcome } from './grant-refresh.workflow';
import { lockGrant, LOST_REFRESH_MS, needsAuthorization } from './grant-rows';
import { openTokens } from './oauth-records';


/** The access token a connection's requests carry now, and the grant version it belongs to. */
export interface GrantToken {
  readonly grantId: string;
  readonly connectionId: string;
  readonly version: number;
  readonly accessToken: string;
  readonly expiresAt: number | null;
}

/** How often a waiter looks again while another node refreshes the same grant. */
const WAIT_STEP_MS = 50;

/**
 * The grants of connections, as App calls use them. `current` reads the installed pair; a
 * refresh is single-flight per grant across every node:
 * - under the grant's row lock it submits one refresh execution (`app.oauth.refresh`) and saves
 *   its ID as the grant's refresh intent (one per grant), or finds the pair already rotated by
 *   someone else (then it uses that one, never refreshing twice);
 * - the refresh is sent by that execution, as an entry of its call log through the egress
 *   client, outside any transaction; the rotated pair is saved by compare-and-swap on the version
 *   and the intent, in the commit of the call's result; the caller waits for the execution's end;
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
    private readonly deps: { readonly db: Database; readonly sealed: SealedRecords; readonly engine: Engine; readonly now?: () => number },
  ) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /** The active grant's token of a connection (or of a developer test: `connectionId` is its holder), or null when it holds none (or needs authorization). */
  async current(connectionId: string): Promise<GrantToken | null> {
    const row = await this.deps.db.one<{ id: string; version: number; tokens_record_id: string; state: string }>({
      name: 'app-oauth.current-grant-of-holder',
      text: 'SELECT id, version, tokens_record_id, state FROM app_oauth_grants WHERE connection_id = $1 OR developer_test_id = $1',
      values: [connectionId],
    });
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
    await this.deps.db.transaction(async (tx) => {
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
    let refreshId: string | null = null;
    for (let waited = 0; refreshId === null; waited += WAIT_STEP_MS) {
      const claim = await this.deps.db.transaction(async (tx) => {
        const row = await lockGrant(tx, seen.grantId);
        if (row === undefined) return { kind: 'gone' as const };
        if (row.version !== seen.version) return { kind: 'moved' as const };
        if (row.state !== 'active') return { kind: 'needs_authorization' as const };
        if (row.refresh_intent !== null) {
          if (!row.stale) return { kind: 'wait' as const };
          await needsAuthorization(tx, row);
          return { kind: 'needs_authorization' as const };
        }
        // The intent is the refresh execution, submitted in this transaction: one refresh per grant version.
        const serviceId = await cleanupService(tx, row.organization_id);
        const executionId = await this.deps.engine.in(tx).submit({
          ...GRANT_REFRESH.command({ grantId: row.id, version: row.version }),
          scope: { kind: 'service', id: serviceId, organizationId: row.organization_id },
          identity: executionIdentity.encode(identityForService({ id: serviceId, organizationId: row.organization_id })),
          resource: { type: 'app-oauth-grant', id: row.id },
        });
        await tx.query('UPDATE app_oauth_grants SET refresh_intent = $2, refresh_intent_at = now() WHERE id = $1', [row.id, executionId]);
        return { kind: 'claimed' as const, executionId };
      });
      if (claim.kind === 'moved') return this.newer(seen);
      if (claim.kind === 'gone' || claim.kind === 'needs_authorization') throw new McpFailure('needs_authorization', 'the connection needs authorization again');
      if (claim.kind === 'claimed') refreshId = claim.executionId;
      else await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
      if (waited > LOST_REFRESH_MS * 2) throw new McpFailure('unreachable', 'another refresh of this grant did not finish');
    }
    const outcome = await this.outcome(refreshId);
    if (outcome === 'refreshed' || outcome === 'moved') return this.newer(seen);
    if (outcome === 'unreachable') throw new McpFailure('unreachable', 'the authorization server could not refresh the grant');
    if (outcome === 'too_late') throw new McpFailure('needs_authorization', 'the refreshed grant arrived too late and went to cleanup; the connection needs authorization again');
    throw new McpFailure('needs_authorization', 'the grant could not be refreshed; the connection needs authorization again');
  }

  /** Waits for a refresh execution's end (at most until its intent would count as lost) and answers its outcome. */
  private async outcome(refreshId: string): Promise<RefreshOutcome | 'failed'> {
    let state: string;
    try {
      state = await this.deps.engine.waitForEnd(refreshId, AbortSignal.timeout(LOST_REFRESH_MS * 2));
    } catch {
      return 'unreachable';
    }
    if (state !== 'completed') return 'failed';
    const result = (await this.deps.engine.result(refreshId)) as { outcome?: RefreshOutcome } | null | undefined;
    return result?.outcome ?? 'failed';
  }

  private async newer(seen: GrantToken): Promise<GrantToken> {
    const now = await this.current(seen.connectionId);
    if (now === null) throw new McpFailure('needs_authorization', 'the connection needs authorization again');
    return now;
  }
}

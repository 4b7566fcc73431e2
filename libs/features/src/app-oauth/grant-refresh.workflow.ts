import { codec, defineWorkflow, executionReads, type Engine, type Json, type Queryable } from '@openbot/engine';
import { isOAuthFailure, refreshTokens, type Fetch, type TokenSet } from '@openbot/protocol';
import type { Database } from '../../../platform/src/database/sql';
import type { Sealer } from '../../../platform/src/sealing/sealer';
import type { SealedRecords } from '../../../platform/src/sealing/sealed-records';
import { CLEANUP_RECHECK_MS } from './grant-cleanup.workflow';
import { saveGrantResult, sealTokensIn } from './grant-cleanup-command';
import { lockGrant, needsAuthorization, type GrantRow } from './grant-rows';
import { jsonOf } from './oauth-codecs';
import { openClient, openTokens, registrationById } from './oauth-records';

/**
 * What a refresh came to: `refreshed` (the rotated pair is installed), `moved` (the grant was
 * no longer this refresh's: nothing was sent), `too_late` (the pair arrived after the intent was
 * given up: an unused grant result with its cleanup), `needs_authorization`, `unreachable`
 * (nothing was granted; a later call may try again).
 */
export const REFRESH_OUTCOMES = ['refreshed', 'moved', 'too_late', 'needs_authorization', 'unreachable'] as const;
export type RefreshOutcome = (typeof REFRESH_OUTCOMES)[number];

export const GRANT_REFRESH = defineWorkflow({
  name: 'app.oauth.refresh',
  audience: 'service',
  input: codec.object({ grantId: codec.string, version: codec.number }),
  state: codec.object({ grantId: codec.string, version: codec.number, outcome: codec.nullable(codec.oneOf(REFRESH_OUTCOMES)) }),
  result: codec.object({ outcome: codec.string }),
  calls: { refresh: codec.json },
});

/** The saved result of the refresh call: the rotated pair, the server's failure (a lost answer too), or not sent. */
type RefreshAnswer = { readonly tokens: TokenSet } | { readonly failure: string } | { readonly notSent: true };

/** The grant is still this refresh's: the version it refreshes, its intent, active. */
const ours = (row: GrantRow | undefined, executionId: string, version: number): row is GrantRow =>
  row !== undefined && row.version === version && row.refresh_intent === executionId && row.state === 'active';

/**
 * One refresh of one grant version, as an execution of the organization's App OAuth service
 * (its execution ID is the grant's refresh intent, saved with its submit under the grant's row
 * lock: single-flight). The refresh token is spent by one unsafe call-log entry: a takeover never
 * sends it again (the execution waits in outcome_unknown, and the intent goes stale). The call's
 * commit, in the transaction that saves its result:
 * - a rotated pair is installed by compare-and-swap on version and intent, and saved as a grant
 *   result with its cleanup command (GRANT-01); a pair whose intent was given up meanwhile is
 *   an unused result whose cleanup runs at once;
 * - `unreachable` or `refused` (nothing granted) drops the intent; any other failure, a lost
 *   answer included, makes the grant `needs_authorization` unless a newer pair is there: the old
 *   refresh token may be spent, and trying it again could revoke the whole grant family.
 * A refresh that ends otherwise (failed, stopped) while its intent stands leaves the grant
 * `needs_authorization` for the same reason.
 * A refresh is a grant send like a code exchange (GRANT-07): before sending, under the shared
 * lock of its registration that cleanup takes, it waits on its durable timer while a saved
 * revocation intent reserves the grant scope (keeping its refresh intent fresh meanwhile: nothing
 * was sent, so nothing is lost); the commit that installs the rotated pair takes the same lock.
 * Its lineage's holder record stands for its pending send (GRANT-05).
 */
export function grantRefreshWorkflow(deps: { readonly db: Database; readonly fetch: Fetch; readonly sealed: SealedRecords; readonly sealer: Sealer; readonly engine: () => Engine }) {
  /**
   * Whether a saved revocation intent of the grant's registration holds this refresh back; looked
   * at under the registration's shared lock (GRANT-07). While it waits, its intent stays fresh.
   */
  const revocationReserves = (grantId: string, executionId: string): Promise<boolean> =>
    deps.db.transaction(async (tx) => {
      const registrationId = await shareRegistrationLock(tx, grantId);
      if (registrationId === null) return false;
      const { rows } = await tx.query(`SELECT 1 FROM app_oauth_grant_uses WHERE registration_id = $1 AND kind = 'revocation' LIMIT 1`, [registrationId]);
      if (rows.length === 0) return false;
      await tx.query('UPDATE app_oauth_grants SET refresh_intent_at = now() WHERE id = $1 AND refresh_intent = $2', [grantId, executionId]);
      return true;
    });
  return GRANT_REFRESH.implement({
    initial: (input) => ({ ...input, outcome: null }),
    next: (state) => (state.outcome === null ? { phase: 'refresh' } : { end: 'completed', result: { outcome: state.outcome } }),
    phases: {
      refresh: {
        // A run that failed after the call's result was saved is run again: it reuses that result, never sending the refresh token twice.
        retries: 2,
        async run(context) {
          const { grantId, version } = context.state;
          const executionId = context.executionId;
          if (await revocationReserves(grantId, executionId)) return { state: context.state, wait: { until: new Date(context.clock.now() + CLEANUP_RECHECK_MS) } };
          const answer = (await context.call(
            'refresh',
            {
              safe: false,
              kind: 'oauth',
              commit: async (tx, saved) => {
                const result = saved.result as RefreshAnswer;
                if ('notSent' in result) return;
                await shareRegistrationLock(tx, grantId);
                const row = await lockGrant(tx, grantId);
                if ('tokens' in result) {
                  const installed = ours(row, executionId, version);
                  const tokensRecordId = await sealTokensIn(tx, deps.sealer, result.tokens);
                  if (installed) await install(tx, row, tokensRecordId);
                  const grant = await grantOfResult(tx, grantId);
                  if (grant === null) return;
                  await saveGrantResult(
                    tx,
                    deps.engine().in(tx),
                    { callId: saved.callId, kind: 'refresh', organizationId: grant.organization_id, registrationId: grant.registration_id, lineageId: grant.lineage_id, tokensRecordId, sourceExecutionId: null, installed },
                    { held: false },
                  );
                  return;
                }
                if (row === undefined) return;
                if (result.failure === 'unreachable' || result.failure === 'refused') {
                  if (row.refresh_intent === executionId) await tx.query('UPDATE app_oauth_grants SET refresh_intent = NULL, refresh_intent_at = NULL WHERE id = $1', [grantId]);
                  return;
                }
                // invalid_grant or a lost answer: final only when no newer pair was saved meanwhile.
                if (row.version === version) await needsAuthorization(tx, row);
              },
            },
            async (): Promise<Json> => {
              const row = await deps.db.one<GrantRow>(
                'SELECT id, connection_id, registration_id, organization_id, state, version, tokens_record_id, resource, refresh_intent::text AS refresh_intent, false AS stale FROM app_oauth_grants WHERE id = $1',
                [grantId],
              );
              // The grant moved on (or the intent was given up) before anything was sent: the refresh token is not spent here.
              if (!ours(row, executionId, version)) return { notSent: true };
              const registration = (await registrationById(deps.db, row.registration_id))!;
              const client = await openClient(deps.sealed, registration.clientRecordId);
              const old = await openTokens(deps.sealed, row.tokens_record_id);
              if (old.refresh_token === null) return { failure: 'no_refresh_token' };
              try {
                return { tokens: jsonOf(await refreshTokens(deps.fetch, registration.metadata, client, { refreshToken: old.refresh_token, resource: row.resource, now: context.clock.now() })) };
              } catch (error) {
                if (isOAuthFailure(error)) return { failure: error.reason };
                throw error;
              }
            },
          )) as RefreshAnswer | null;
          return { state: { ...context.state, outcome: await outcomeOf(answer) } };

          async function outcomeOf(saved: RefreshAnswer | null): Promise<RefreshOutcome> {
            if (saved === null) return 'needs_authorization';
            if ('notSent' in saved) return 'moved';
            if ('failure' in saved) return saved.failure === 'unreachable' || saved.failure === 'refused' ? 'unreachable' : 'needs_authorization';
            const result = await deps.db.one<{ installed: boolean }>(
              `SELECT installed_at IS NOT NULL AS installed FROM app_oauth_grant_results WHERE call_id = ANY($1::text[]) AND kind = 'refresh'`,
              [await executionReads.callIds(deps.db, executionId)],
            );
            return result?.installed === true ? 'refreshed' : 'too_late';
          }
        },
      },
    },
    async end(context) {
      if (context.outcome === 'completed') return;
      // Ended without a saved answer (failed, stopped): the refresh token may be spent.
      const row = await lockGrant(context.tx, context.state.grantId);
      if (row !== undefined && row.refresh_intent === context.executionId) await needsAuthorization(context.tx, row);
    },
  });
}

/** Installs a rotated pair (the caller checked version and intent under the row lock) and forgets the spent one. */
async function install(tx: Queryable, row: GrantRow, tokensRecordId: string): Promise<void> {
  await tx.query(
    `UPDATE app_oauth_grants SET tokens_record_id = $2, version = version + 1, refresh_intent = NULL, refresh_intent_at = NULL, updated_at = now() WHERE id = $1`,
    [row.id, tokensRecordId],
  );
  // The rotated-out pair is spent at the server: forget it.
  await tx.query('UPDATE app_oauth_grant_results SET tokens_record_id = NULL WHERE tokens_record_id = $1 AND installed_at IS NOT NULL', [row.tokens_record_id]);
  await tx.query('DELETE FROM sealed_records WHERE id = $1', [row.tokens_record_id]);
}

/**
 * Takes the lock grant sends and installation share with cleanup (GRANT-07): its registration's,
 * in share mode, before the grant's row lock. Answers the registration, or null when the grant is gone.
 */
async function shareRegistrationLock(tx: Queryable, grantId: string): Promise<string | null> {
  const { rows } = await tx.query<{ registration_id: string }>(
    'SELECT r.id AS registration_id FROM app_oauth_registrations r JOIN app_oauth_grants g ON g.registration_id = r.id WHERE g.id = $1 FOR SHARE OF r',
    [grantId],
  );
  return rows[0]?.registration_id ?? null;
}

/** The grant's organization, registration and lineage (its connection or developer test): from its row, or from the result it became when it was removed meanwhile. */
async function grantOfResult(tx: Queryable, grantId: string): Promise<{ organization_id: string; registration_id: string; lineage_id: string | null } | null> {
  const { rows: live } = await tx.query<{ organization_id: string; registration_id: string; lineage_id: string | null }>(
    'SELECT organization_id, registration_id, coalesce(connection_id, developer_test_id) AS lineage_id FROM app_oauth_grants WHERE id = $1',
    [grantId],
  );
  if (live[0] !== undefined) return live[0];
  const { rows } = await tx.query<{ organization_id: string; registration_id: string; lineage_id: string | null }>(
    `SELECT organization_id, registration_id, lineage_id FROM app_oauth_grant_results WHERE call_id LIKE $1 ORDER BY created_at DESC LIMIT 1`,
    [`grant:${grantId}:%`],
  );
  return rows[0] ?? null;
}

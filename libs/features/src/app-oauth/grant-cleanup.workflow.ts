import type { SealedRecordId } from '@openbot/domain';
import { backoffMs, codec, defineWorkflow, type BackoffSteps, type Codec, type Json } from '@openbot/engine';
import { isOAuthFailure, revokeToken, type Fetch } from '@openbot/protocol';
import type { Database } from '../../../platform/src/database/sql';
import type { SealedRecords } from '../../../platform/src/sealing/sealed-records';
import { openClient, openTokens, registrationById } from './oauth-records';

interface CleanupState {
  readonly resultId: string;
  readonly sourceExecutionId: string | null;
  /** The source execution has ended (or there is none): an unused result may be cleaned now. */
  readonly sourceEnded: boolean;
  /** The revocation intent is saved in the grant-use table: the grant scope is reserved (GRANT-07). */
  readonly reserved: boolean;
  readonly round: number;
  /** How often it has waited for a holder of its lineage so far: the next wait grows (GRANT-04). Absent in state saved before decision 067. */
  readonly waits?: number;
  /** What cleanup did: `installed` (nothing to do), `revoked`, `local_only`. */
  readonly outcome: string | null;
}

export const GRANT_CLEANUP = defineWorkflow({
  name: 'app.oauth.grant.cleanup',
  audience: 'service',
  input: codec.object({ resultId: codec.string, sourceExecutionId: codec.nullable(codec.string) }),
  state: codec.object({
    resultId: codec.string,
    sourceExecutionId: codec.nullable(codec.string),
    sourceEnded: codec.boolean,
    reserved: codec.boolean,
    round: codec.number,
    waits: codec.optional(codec.number),
    outcome: codec.nullable(codec.string),
  }) satisfies Codec<CleanupState>,
  result: codec.object({ outcome: codec.string }),
  calls: { revoke: codec.json },
});

/** How long a code exchange waits before it looks at a saved revocation intent again (GRANT-07): revocations are short. */
export const CLEANUP_RECHECK_MS = 2_000;

/**
 * The durable timer between looks at the grant scope (GRANT-04) and between failed revocations:
 * 2 s, 4 s, 8 s … growing, never more than 10 minutes apart (decision 067).
 */
export const CLEANUP_WAITS: BackoffSteps = { firstMs: CLEANUP_RECHECK_MS, capMs: 10 * 60_000 };

/**
 * Cleanup of one grant result, as the organization's cleanup service (GRANT-01):
 * 1. an unused result of an exchange waits for its source execution to end (GRANT-03): the
 *    source may still install it; a replaced or removed grant has no source and goes on at once;
 * 2. under the registration's row lock (the lock grant sends and installation share, GRANT-07)
 *    it reads only the grant-use table (GRANT-05): while a holder or a pending send of the same
 *    grant lineage (the connection or developer test whose sign-in obtained the pair) remains, it
 *    waits on a durable timer with growing, bounded delays (CLEANUP_WAITS) and looks again
 *    (GRANT-04); another organization's or connection's grant of the same issuer and client no
 *    longer holds it back (decision 067; a result saved before it has no lineage and waits for the
 *    whole registration as before); otherwise it saves its revocation intent there, which new sends
 *    wait for;
 * 3. it revokes the pair at the server (RFC 7009) through the call log; a server without a
 *    revocation endpoint gives a saved `local_only` result; a failed revocation is tried again
 *    on the common retry timer;
 * 4. its end removes the intent (releasing the grant scope), records the outcome and deletes
 *    the sealed pair, all with the final event.
 */
export function grantCleanupWorkflow(deps: { readonly db: Database; readonly sealed: SealedRecords; readonly fetch: Fetch }) {
  return GRANT_CLEANUP.implement({
    initial: (input) => ({ ...input, sourceEnded: input.sourceExecutionId === null, reserved: false, round: 0, outcome: null }),
    next: (state) => {
      if (state.outcome !== null) return { end: 'completed', result: { outcome: state.outcome } };
      if (!state.sourceEnded) return { phase: 'await-source' };
      if (!state.reserved) return { phase: 'reserve' };
      return { phase: 'revoke' };
    },
    phases: {
      'await-source': {
        async run(context) {
          // Woken by the source's end (the engine's await, no polling), or it has ended already.
          return { state: { ...context.state, sourceEnded: true }, wait: { executions: [context.state.sourceExecutionId!] } };
        },
      },
      reserve: {
        async run(context) {
          const state = context.state;
          const verdict = await deps.db.transaction(async (tx) => {
            const { rows } = await tx.query<{ registration_id: string; organization_id: string; lineage_id: string | null; installed: boolean; tokens_record_id: string | null }>(
              'SELECT registration_id, organization_id, lineage_id, installed_at IS NOT NULL AS installed, tokens_record_id FROM app_oauth_grant_results WHERE id = $1',
              [state.resultId],
            );
            const result = rows[0];
            if (result === undefined || result.installed || result.tokens_record_id === null) return 'installed' as const;
            await tx.query('SELECT 1 FROM app_oauth_registrations WHERE id = $1 FOR UPDATE', [result.registration_id]);
            // Only the same lineage holds a revocation back; a result without one (saved before decision 067) waits for the whole registration.
            const { rows: uses } = await tx.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM app_oauth_grant_uses WHERE registration_id = $1 AND kind IN ('holder', 'send') AND ($2::uuid IS NULL OR lineage_id = $2::uuid)`,
              [result.registration_id, result.lineage_id],
            );
            if (uses[0]!.n > 0) return 'in_use' as const;
            await tx.query(
              `INSERT INTO app_oauth_grant_uses (id, registration_id, kind, holder_type, holder_id, organization_id) VALUES ($1, $2, 'revocation', 'grant_result', $1, $3) ON CONFLICT (id) DO NOTHING`,
              [state.resultId, result.registration_id, result.organization_id],
            );
            return 'reserved' as const;
          });
          if (verdict === 'installed') return { state: { ...state, outcome: 'installed' } };
          if (verdict === 'in_use') {
            const waits = (state.waits ?? 0) + 1;
            return { state: { ...state, waits }, wait: { until: new Date(context.clock.now() + backoffMs(waits, CLEANUP_WAITS)) } };
          }
          return { state: { ...state, reserved: true } };
        },
      },
      revoke: {
        async run(context) {
          const state = context.state;
          const outcome = (await context.call(`revoke:${state.round}`, { safe: true, kind: 'oauth' }, async (): Promise<Json> => {
            const row = await deps.db.one<{ registration_id: string; tokens_record_id: string | null }>('SELECT registration_id, tokens_record_id FROM app_oauth_grant_results WHERE id = $1', [state.resultId]);
            if (row === undefined || row.tokens_record_id === null) return { kind: 'local_only' };
            const registration = (await registrationById(deps.db, row.registration_id))!;
            const client = await openClient(deps.sealed, registration.clientRecordId);
            const tokens = await openTokens(deps.sealed, row.tokens_record_id);
            try {
              // The refresh token revokes the whole grant at most servers; the access token is the fallback.
              const token = tokens.refresh_token !== null ? { value: tokens.refresh_token, hint: 'refresh_token' as const } : { value: tokens.access_token, hint: 'access_token' as const };
              return { ...(await revokeToken(deps.fetch, registration.metadata, client, token)) };
            } catch (error) {
              if (isOAuthFailure(error)) return { kind: 'failed', reason: error.reason };
              throw error;
            }
          })) as { kind: string };
          if (outcome.kind === 'failed') return { state: { ...state, round: state.round + 1 }, wait: { until: new Date(context.clock.now() + backoffMs(state.round + 1, CLEANUP_WAITS)) } };
          return { state: { ...state, outcome: outcome.kind } };
        },
      },
    },
    async end(context) {
      if (context.outcome !== 'completed') return;
      const { resultId, outcome } = context.state;
      await context.tx.query(`DELETE FROM app_oauth_grant_uses WHERE id = $1 AND kind = 'revocation'`, [resultId]);
      if (outcome === 'installed') return;
      const { rows } = await context.tx.query('SELECT tokens_record_id FROM app_oauth_grant_results WHERE id = $1 FOR UPDATE', [resultId]);
      const record = (rows[0] as { tokens_record_id: string | null } | undefined)?.tokens_record_id ?? null;
      await context.tx.query(`UPDATE app_oauth_grant_results SET revocation = $2, cleaned_at = now(), tokens_record_id = NULL WHERE id = $1`, [resultId, JSON.stringify({ kind: outcome })]);
      if (record !== null) await context.tx.query('DELETE FROM sealed_records WHERE id = $1', [record as SealedRecordId]);
    },
  });
}

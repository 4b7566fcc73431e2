import type { SealedRecordId } from '@openbot/domain';
import { codec, defineWorkflow, executionReads, type Codec, type Engine, type Json } from '@openbot/engine';
import { exchangeCode, isOAuthFailure, type Fetch, type TokenSet } from '@openbot/protocol';
import type { Database } from '../../../platform/src/database/sql';
import type { Sealer } from '../../../platform/src/sealing/sealer';
import type { SealedRecords } from '../../../platform/src/sealing/sealed-records';
import { CLEANUP_RECHECK_MS } from './grant-cleanup.workflow';
import { handOverGrant, saveGrantResult, sealTokensIn } from './grant-cleanup-command';
import { jsonOf } from './oauth-codecs';
import { openClient, registrationById, SEALED } from './oauth-records';

interface ExchangeState {
  readonly authorizationId: string;
  readonly code: string;
  /** The `iss` of the authorization response (RFC 9207), checked again right before the code is sent. */
  readonly iss: string | null;
  readonly exchanged: boolean;
  readonly failure: { readonly reason: string; readonly message: string } | null;
}

/** The signal a developer test's run waits for: its developer's grant is installed (DEVT-01). */
export const DEVELOPER_TEST_AUTHORIZED = 'developer_test.authorized';

export const CODE_EXCHANGE = defineWorkflow({
  name: 'app.oauth.exchange',
  audience: 'member',
  input: codec.object({ authorizationId: codec.string, code: codec.string, iss: codec.nullable(codec.string) }),
  state: codec.object({
    authorizationId: codec.string,
    code: codec.string,
    iss: codec.nullable(codec.string),
    exchanged: codec.boolean,
    failure: codec.nullable(codec.object({ reason: codec.string, message: codec.string })),
  }) satisfies Codec<ExchangeState>,
  result: codec.json,
  calls: { exchange: codec.json },
});

interface AuthorizationRow {
  readonly registration_id: string;
  readonly connection_id: string | null;
  /** Set instead of `connection_id` for a developer test's own grant (DEVT-01). */
  readonly developer_test_id: string | null;
  readonly organization_id: string;
  readonly verifier_record_id: string;
  readonly resource: string;
  readonly scope: string | null;
}

/**
 * The code exchange of one authorization, as an execution:
 * - before sending, under the registration's shared lock, it waits while a revocation intent
 *   reserves the grant scope (GRANT-07), then records its pending send in the grant-use table;
 * - the exchange is an unsafe call (a code works once): a lost answer waits in outcome_unknown;
 *   its result, late ones included, is saved with a cleanup command in the call's own commit
 *   (GRANT-01), held until this execution ends (GRANT-03);
 * - the end installs the pair on the connection in the transaction of the final event, with the
 *   call ID (GRANT-02); a pair the connection held before is handed to cleanup there (CONN-01);
 *   the connection becomes `ready` under a new grant generation; the send record goes, the
 *   holder record comes (GRANT-05); the held cleanups are admitted.
 */
export function codeExchangeWorkflow(deps: { readonly db: Database; readonly fetch: Fetch; readonly sealed: SealedRecords; readonly sealer: Sealer; readonly engine: () => Engine }) {
  const authorizationOf = async (id: string): Promise<AuthorizationRow> => {
    const row = await deps.db.one<AuthorizationRow>('SELECT registration_id, connection_id, developer_test_id, organization_id, verifier_record_id, resource, scope FROM app_oauth_authorizations WHERE id = $1', [id]);
    if (row === undefined) throw new Error('the authorization request is gone');
    return row;
  };
  return CODE_EXCHANGE.implement({
    initial: (input) => ({ ...input, exchanged: false, failure: null }),
    next: (state) => {
      if (!state.exchanged && state.failure === null) return { phase: 'exchange' };
      const result: Json = state.failure === null ? { installed: true } : { failure: { ...state.failure } };
      return { end: 'completed', result };
    },
    phases: {
      exchange: {
        async run(context) {
          const state = context.state;
          const authorization = await authorizationOf(state.authorizationId);
          const reserved = await deps.db.transaction(async (tx) => {
            await tx.query('SELECT 1 FROM app_oauth_registrations WHERE id = $1 FOR SHARE', [authorization.registration_id]);
            const { rows } = await tx.query(`SELECT 1 FROM app_oauth_grant_uses WHERE registration_id = $1 AND kind = 'revocation' LIMIT 1`, [authorization.registration_id]);
            if (rows.length > 0) return true;
            await tx.query(
              `INSERT INTO app_oauth_grant_uses (id, registration_id, kind, holder_type, holder_id, organization_id, lineage_id) VALUES ($1, $2, 'send', 'execution', $1, $3, $4) ON CONFLICT (id) DO NOTHING`,
              [context.executionId, authorization.registration_id, authorization.organization_id, authorization.connection_id ?? authorization.developer_test_id],
            );
            return false;
          });
          if (reserved) return { state, wait: { until: new Date(context.clock.now() + CLEANUP_RECHECK_MS) } };
          const registration = (await registrationById(deps.db, authorization.registration_id))!;
          const tokens = await context.call(
            'exchange',
            {
              safe: false,
              kind: 'oauth',
              commit: async (tx, saved) => {
                const result = saved.result as { tokens?: TokenSet };
                if (result.tokens === undefined) return;
                // A late result after the source ended (an operator decided) has no end left to admit its cleanup: it runs at once.
                const source = await executionReads.byId(tx, context.executionId);
                const ended = source === null || ['completed', 'failed', 'cancelled'].includes(source.state);
                const tokensRecordId = await sealTokensIn(tx, deps.sealer, result.tokens);
                await saveGrantResult(
                  tx,
                  deps.engine().in(tx),
                  {
                    callId: saved.callId,
                    kind: 'exchange',
                    organizationId: authorization.organization_id,
                    registrationId: authorization.registration_id,
                    lineageId: authorization.connection_id ?? authorization.developer_test_id,
                    tokensRecordId,
                    sourceExecutionId: context.executionId,
                    installed: false,
                  },
                  { held: !ended },
                );
              },
            },
            async (): Promise<Json> => {
              const client = await openClient(deps.sealed, registration.clientRecordId);
              const verifier = (await deps.sealed.get(authorization.verifier_record_id as SealedRecordId))!;
              if (verifier.purpose !== SEALED.verifier) throw new Error('the PKCE verifier record is not one');
              try {
                const set = await exchangeCode(deps.fetch, registration.metadata, client, {
                  code: state.code,
                  iss: state.iss,
                  codeVerifier: verifier.value as string,
                  redirectUri: registration.redirectUri,
                  resource: authorization.resource,
                  now: context.clock.now(),
                });
                return { tokens: jsonOf(set) };
              } catch (error) {
                if (isOAuthFailure(error) && !error.resultLost && !error.notSent) return { failure: { reason: error.reason, message: error.message } };
                throw error;
              }
            },
          );
          return { state: { ...state, ...exchangeOutcome(tokens) } };
        },
      },
    },
    async end(context) {
      const tx = context.tx;
      const { rows: authRows } = await tx.query('SELECT registration_id, connection_id, developer_test_id, organization_id, resource, scope FROM app_oauth_authorizations WHERE id = $1', [context.state.authorizationId]);
      const authorization = authRows[0] as Omit<AuthorizationRow, 'verifier_record_id'> | undefined;
      await tx.query(`DELETE FROM app_oauth_grant_uses WHERE id = $1 AND kind = 'send'`, [context.executionId]);
      if (authorization !== undefined && context.outcome === 'completed' && context.state.exchanged) {
        if (authorization.developer_test_id !== null) await installForDeveloperTest(context.executionId, authorization, authorization.developer_test_id);
        else await install(context.executionId, authorization);
      }
      const { rows: held } = await tx.query(`SELECT cleanup_execution_id FROM app_oauth_grant_results WHERE source_execution_id = $1 AND cleanup_execution_id IS NOT NULL`, [context.executionId]);
      for (const row of held as Array<{ cleanup_execution_id: string }>) await context.admit(row.cleanup_execution_id);

      /**
       * A developer test's own grant (DEVT-01): installed only while its test waits for the sign-in
       * (one that ended or was removed leaves the result to its held cleanup, GRANT-03); the test
       * is the holder in the grant-use table (GRANT-05) and its run is woken to connect with it.
       */
      async function installForDeveloperTest(executionId: string, auth: Omit<AuthorizationRow, 'verifier_record_id'>, testId: string): Promise<void> {
        await tx.query('SELECT 1 FROM app_oauth_registrations WHERE id = $1 FOR SHARE', [auth.registration_id]);
        const { rows: tests } = await tx.query(`SELECT execution_id FROM app_developer_tests WHERE id = $1 AND state = 'needs_authorization' FOR UPDATE`, [testId]);
        const test = tests[0] as { execution_id: string } | undefined;
        if (test === undefined) return;
        const { rows } = await tx.query(`SELECT id, call_id, tokens_record_id FROM app_oauth_grant_results WHERE source_execution_id = $1 AND kind = 'exchange' AND installed_at IS NULL`, [executionId]);
        const result = rows[0] as { id: string; call_id: string; tokens_record_id: string } | undefined;
        if (result === undefined) return;
        await handOverGrant(tx, { submit: (command) => context.submit(command) }, testId, 'removed');
        await tx.query(
          `INSERT INTO app_oauth_grants (id, organization_id, registration_id, developer_test_id, state, tokens_record_id, version, resource, scope, installed_call_id)
           VALUES ($1, $2, $3, $4, 'active', $5, 1, $6, $7, $8)`,
          [result.id, auth.organization_id, auth.registration_id, testId, result.tokens_record_id, auth.resource, auth.scope, result.call_id],
        );
        await tx.query(
          `INSERT INTO app_oauth_grant_uses (id, registration_id, kind, holder_type, holder_id, organization_id, lineage_id) VALUES ($1, $2, 'holder', 'developer_test', $3, $4, $3) ON CONFLICT (id) DO NOTHING`,
          [result.id, auth.registration_id, testId, auth.organization_id],
        );
        await tx.query('UPDATE app_oauth_grant_results SET installed_at = now() WHERE id = $1', [result.id]);
        await tx.query(`UPDATE app_developer_tests SET state = 'running', authorization_url = NULL WHERE id = $1`, [testId]);
        await context.signal(test.execution_id, DEVELOPER_TEST_AUTHORIZED);
      }

      async function install(executionId: string, auth: Omit<AuthorizationRow, 'verifier_record_id'>): Promise<void> {
        // The lock grant sends and installation share with cleanup (GRANT-07).
        await tx.query('SELECT 1 FROM app_oauth_registrations WHERE id = $1 FOR SHARE', [auth.registration_id]);
        const { rows: connections } = await tx.query('SELECT id FROM app_connections WHERE id = $1 AND deleting_at IS NULL FOR UPDATE', [auth.connection_id]);
        if (connections.length === 0) return;
        const { rows } = await tx.query(`SELECT id, call_id, tokens_record_id FROM app_oauth_grant_results WHERE source_execution_id = $1 AND kind = 'exchange' AND installed_at IS NULL`, [executionId]);
        const result = rows[0] as { id: string; call_id: string; tokens_record_id: string } | undefined;
        if (result === undefined) return;
        // A pair the connection held before goes to service cleanup in this transaction (CONN-01, GRANT-03).
        await handOverGrant(tx, { submit: (command) => context.submit(command) }, auth.connection_id!, 'replaced');
        await tx.query(
          `INSERT INTO app_oauth_grants (id, organization_id, registration_id, connection_id, state, tokens_record_id, version, resource, scope, installed_call_id)
           VALUES ($1, $2, $3, $4, 'active', $5, 1, $6, $7, $8)
           ON CONFLICT (connection_id) DO UPDATE SET registration_id = EXCLUDED.registration_id, state = 'active', tokens_record_id = EXCLUDED.tokens_record_id,
             version = app_oauth_grants.version + 1, resource = EXCLUDED.resource, scope = EXCLUDED.scope, installed_call_id = EXCLUDED.installed_call_id,
             refresh_intent = NULL, refresh_intent_at = NULL, updated_at = now(),
             step_ups = CASE WHEN app_oauth_grants.step_up_scope IS NULL THEN 0 ELSE app_oauth_grants.step_ups + 1 END, step_up_scope = NULL`,
          [result.id, auth.organization_id, auth.registration_id, auth.connection_id, result.tokens_record_id, auth.resource, auth.scope, result.call_id],
        );
        const { rows: grants } = await tx.query('SELECT id FROM app_oauth_grants WHERE connection_id = $1', [auth.connection_id]);
        const grantId = (grants[0] as { id: string }).id;
        await tx.query(
          `INSERT INTO app_oauth_grant_uses (id, registration_id, kind, holder_type, holder_id, organization_id, lineage_id) VALUES ($1, $2, 'holder', 'connection', $3, $4, $3)
           ON CONFLICT (id) DO UPDATE SET registration_id = EXCLUDED.registration_id, lineage_id = EXCLUDED.lineage_id`,
          [grantId, auth.registration_id, auth.connection_id, auth.organization_id],
        );
        await tx.query('UPDATE app_oauth_grant_results SET installed_at = now() WHERE id = $1', [result.id]);
        await tx.query(`UPDATE app_connections SET state = 'ready', generation = generation + 1, category = NULL, error_id = NULL, updated_at = now() WHERE id = $1`, [auth.connection_id]);
      }
    },
  });
}

/**
 * What a saved exchange result means. Only our own send saves `{ tokens }` (with its grant result,
 * in the call's commit) or `{ failure }`. An operator's `succeeded` decision on an exchange left in
 * outcome_unknown saves the operator's result instead, without that commit: no pair was kept, so
 * the connection still needs a sign-in.
 */
function exchangeOutcome(saved: Json): Pick<ExchangeState, 'exchanged' | 'failure'> {
  const result = typeof saved === 'object' && saved !== null && !Array.isArray(saved) ? saved : {};
  const failure = result.failure as ExchangeState['failure'] | undefined;
  if (failure !== undefined && failure !== null) return { exchanged: false, failure };
  if (result.tokens !== undefined) return { exchanged: true, failure: null };
  return { exchanged: false, failure: { reason: 'decided_without_tokens', message: 'An operator decided the code exchange; no tokens were kept. Sign in again.' } };
}

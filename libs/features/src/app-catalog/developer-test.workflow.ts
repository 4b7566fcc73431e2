import type { ExecutionId } from '@openbot/domain';
import { codec, defineWorkflow, type Json } from '@openbot/engine';
import { toFailure, type McpConnection } from '@openbot/protocol';
import type { Database } from '../../../platform/src/database/sql';
import { AUTHORIZATION_PREPARE, type PreparedAuthorization } from '../app-oauth/authorization-prepare.workflow';
import { AUTHORIZATION_LIFETIME_MS, issueAuthorization } from '../app-oauth/authorization-request';
import { DEVELOPER_TEST_AUTHORIZED } from '../app-oauth/code-exchange.workflow';
import { handOverGrant } from '../app-oauth/grant-cleanup-command';
import type { AppClient } from '../apps/app-client';
import type { SealedRecords } from '../../../platform/src/sealing/sealed-records';
import { developerTestTarget } from './developer-test-target';

export const DEVELOPER_TEST = defineWorkflow({
  name: 'app.developer-test',
  audience: 'member',
  input: codec.object({ testId: codec.string, organizationId: codec.string, memberId: codec.string }),
  state: codec.object({
    testId: codec.string,
    organizationId: codec.string,
    memberId: codec.string,
    outcome: codec.nullable(codec.json),
    /** `connect`; after a 401 with OAuth discovery: `prepare` → `sign-in` → `waiting`, then `connect` again with the developer's grant. */
    step: codec.string,
    /** Connection attempts so far: the first without a grant, the second with the developer's own. */
    round: codec.number,
    serverUrl: codec.nullable(codec.string),
    prepareId: codec.nullable(codec.string),
    signInUntil: codec.nullable(codec.number),
  }),
  result: codec.json,
  signals: { [DEVELOPER_TEST_AUTHORIZED]: codec.json },
  calls: { run: codec.json },
});

interface Connection {
  readonly state: string;
  readonly era: string | null;
  readonly protocolVersion: string | null;
  readonly category: string | null;
  readonly closed: string | null;
}

interface Outcome {
  readonly connection: Connection;
  readonly tools: readonly string[];
  /** The endpoint to sign in for, when the server answered 401. */
  readonly serverUrl?: string | null;
}

const unauthorized = (category: string): Outcome => ({ connection: { state: 'needs_authorization', era: null, protocolVersion: null, category, closed: null }, tools: [] });

/**
 * A developer test of an App (DEVT-01): the common workflow. Its call-log entry opens a
 * pre-publish connection to the chosen remote with the values given at the start, as the
 * original caller, lists its tools and closes the connection before the call's result is saved.
 * A 401 with OAuth discovery runs sign-in preparation (the common `app.oauth.prepare`, as a child)
 * and hands out an authorization URL for the developer's own grant: the test shows
 * `needs_authorization` until the developer signs in through the registration's callback, whose
 * code exchange installs the grant on the test and wakes it; it then connects again with it
 * (or gives up when the request expires). The end writes the outcome, removes the sealed values
 * and hands the grant to cleanup, after the connection was closed. Each step is an event:
 * `developer_test.connected`, `developer_test.needs_authorization`, `developer_test.tools`, `developer_test.closed`.
 */
export function developerTestWorkflow(deps: { readonly db: Database; readonly client: AppClient; readonly sealed: SealedRecords; readonly publicUrl: string }) {
  return DEVELOPER_TEST.implement({
    initial: (input) => ({ ...input, outcome: null, step: 'connect', round: 0, serverUrl: null, prepareId: null, signInUntil: null }),
    next: (state) => (state.outcome !== null ? { end: 'completed', result: state.outcome } : { phase: state.step as 'connect' | 'prepare' | 'sign-in' | 'waiting' }),
    phases: {
      connect: {
        async run(context) {
          const { testId, memberId, round } = context.state;
          const actor = { kind: 'member', id: memberId } as const;
          const outcome = (await context.call(`run:${round}`, { safe: true, kind: 'other' }, async () => {
            const target = await developerTestTarget(deps, testId);
            if (target === null) return json({ connection: { state: 'failed', era: null, protocolVersion: null, category: 'not_found', closed: null }, tools: [] });
            let connection: McpConnection | null = null;
            try {
              connection = await deps.client.open(target, { actor, signal: context.signal });
              const listed = await connection.listTools({ signal: context.signal });
              const opened = connection;
              connection = null;
              const closed = await opened.close();
              return json({ connection: { state: 'ready', era: opened.era, protocolVersion: opened.protocolVersion, category: null, closed: closed.kind }, tools: listed.tools.map((t) => t.name) });
            } catch (error) {
              const failure = toFailure(error, 'open');
              if (connection !== null) await connection.close().catch(() => undefined);
              const needs = failure.reason === 'needs_authorization';
              // Where the developer signs in: the endpoint with its variables resolved as this run used them.
              const serverUrl = needs ? await deps.client.urlOf(target, actor).catch(() => null) : null;
              return json({ connection: { state: needs ? 'needs_authorization' : 'failed', era: null, protocolVersion: null, category: failure.category, closed: null }, tools: [], serverUrl });
            }
          })) as Json;
          if (!isOutcome(outcome)) throw new Error('developer test: the saved call result is not an outcome');
          context.emit('developer_test.connected', { testId, round, ...outcome.connection });
          // The first 401 asks for the developer's own grant; a second one (with the grant) is the outcome.
          if (outcome.connection.state === 'needs_authorization' && round === 0 && typeof outcome.serverUrl === 'string') {
            return { state: { ...context.state, step: 'prepare', serverUrl: outcome.serverUrl } };
          }
          context.emit('developer_test.tools', { testId, tools: [...outcome.tools] });
          context.emit('developer_test.closed', { testId, closed: outcome.connection.closed });
          return { state: { ...context.state, outcome: json({ connection: outcome.connection, tools: outcome.tools }) } };
        },
      },
      prepare: {
        async run(context) {
          const { testId, serverUrl } = context.state;
          const prepareId = context.startChild(AUTHORIZATION_PREPARE, { connectionId: testId, serverUrl: serverUrl! }, { attached: true, resource: { type: 'app-developer-test', id: testId } });
          return { state: { ...context.state, step: 'sign-in', prepareId }, wait: { children: true } };
        },
      },
      'sign-in': {
        async run(context) {
          const { testId, organizationId, memberId, prepareId } = context.state;
          const prepared = (await context.childResult(AUTHORIZATION_PREPARE, prepareId as ExecutionId)) as PreparedAuthorization | undefined;
          if (prepared === undefined || 'failure' in prepared) {
            return { state: { ...context.state, outcome: json(unauthorized(prepared === undefined ? 'authorization_unavailable' : prepared.failure.reason)) } };
          }
          // A replay of this phase hands out a new request and shows it instead; the one before expires unused.
          // Bound to the developer like a connection's sign-in (decision 066): the test shows OpenBot's start URL, never the authorization server's.
          const { authorizationId, startUrl: authorizationUrl } = await issueAuthorization(deps, prepared, prepared.scope, { connectionId: null, developerTestId: testId, organizationId, memberId, returnTo: null }, async (tx, issued) => {
            await tx.count(`UPDATE app_developer_tests SET state = 'needs_authorization', authorization_url = $2 WHERE id = $1 AND state IN ('running', 'needs_authorization')`, [testId, issued.startUrl]);
          });
          context.emit('developer_test.needs_authorization', { testId, authorizationId, authorizationUrl });
          const signInUntil = context.clock.now() + AUTHORIZATION_LIFETIME_MS;
          return { state: { ...context.state, step: 'waiting', signInUntil }, wait: { signals: [DEVELOPER_TEST_AUTHORIZED], until: new Date(signInUntil) } };
        },
      },
      waiting: {
        async run(context) {
          const { testId, signInUntil } = context.state;
          await context.inbox.receive([DEVELOPER_TEST_AUTHORIZED]);
          const grant = await deps.db.one(`SELECT 1 FROM app_oauth_grants WHERE developer_test_id = $1 AND state = 'active'`, [testId]);
          if (grant !== undefined) return { state: { ...context.state, step: 'connect', round: context.state.round + 1 } };
          if (context.clock.now() >= signInUntil!) return { state: { ...context.state, outcome: json(unauthorized('authorization_expired')) } };
          return { state: context.state, wait: { signals: [DEVELOPER_TEST_AUTHORIZED], until: new Date(signInUntil!) } };
        },
      },
    },
    async end(context) {
      const { testId, outcome } = context.state;
      const saved = isOutcome(outcome) ? outcome : null;
      const tx = context.tx;
      const { rows } = await tx.query('SELECT secrets_record_id FROM app_developer_tests WHERE id = $1 FOR UPDATE', [testId]);
      const secrets = (rows[0] as { secrets_record_id: string | null } | undefined)?.secrets_record_id ?? null;
      await tx.query(`UPDATE app_developer_tests SET state = $2, connection = $3::jsonb, tools = $4::jsonb, authorization_url = NULL, secrets_record_id = NULL WHERE id = $1`, [
        testId,
        context.outcome === 'completed' && saved !== null && saved.connection.state === 'ready' ? 'completed' : 'failed',
        saved === null ? null : JSON.stringify(saved.connection),
        saved === null ? null : JSON.stringify(saved.tools),
      ]);
      // Nothing sends the values after the run: their sealed record goes with its end.
      if (secrets !== null) await tx.query('DELETE FROM sealed_records WHERE id = $1', [secrets]);
      // A sign-in not completed by now is used up: a late callback is refused before its code is sent.
      await tx.query('UPDATE app_oauth_authorizations SET used_at = now() WHERE developer_test_id = $1 AND used_at IS NULL', [testId]);
      // The developer's grant goes to cleanup with the end (GRANT-05): the run's connection was closed before its call's result was saved.
      await handOverGrant(tx, { submit: (command) => context.submit(command) }, testId, 'removed');
    },
  });
}

/** What this workflow's call saved: checked on the fields an outcome always has. */
function isOutcome(value: unknown): value is Outcome {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.connection === 'object' && v.connection !== null && typeof (v.connection as Record<string, unknown>).state === 'string' && Array.isArray(v.tools);
}

function json(value: unknown): Json {
  return JSON.parse(JSON.stringify(value)) as Json;
}

import { Client } from 'pg';
import { bearer } from '../support/chat-fixture';
import { startAuthorizationServer, type TestAuthorizationServer } from '../support/oauth-authorization-server';
import { TestBrowser } from '../support/oidc-provider';
import { completeByLoopback, LOOPBACK_LISTENER } from '../support/app-oauth-sign-in';
import { startTestApp, type TestApp } from '../support/test-app';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fakes/mcp-protected-server';

/**
 * The grant rules clause by clause (GRANT-02, GRANT-05, GRANT-07), on the real app with a real
 * OAuth authorization server and protected MCP server per test (app-oauth.spec.ts has the flows):
 * - GRANT-02: the credential, the call ID that obtained it and the final event commit in one
 *   transaction, and a fault between them leaves none of the three;
 * - GRANT-05: the grant-use table records holders, pending sends and revocations in the
 *   transactions of what they describe, and cleanup decides from it without opening a secret;
 * - GRANT-07: sends and installation wait on the lock cleanup holds; a saved revocation intent
 *   holds new sends back and survives a takeover of its cleanup.
 */
describe('App OAuth grant rules', () => {
  const PUBLIC_URL = 'http://127.0.0.1:8080';
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_PUBLIC_URL: PUBLIC_URL } });
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = (secret: string, path: string, body: unknown = {}) => t.http().post(path).set('authorization', bearer(secret)).send(body as object);

  async function servers<T>(work: (s: { as: TestAuthorizationServer; rs: ProtectedMcpServer }) => Promise<T>, options: Parameters<typeof startAuthorizationServer>[0] = {}): Promise<T> {
    const as = await startAuthorizationServer(options);
    const rs = await startProtectedMcpServer(as);
    try {
      return await work({ as, rs });
    } finally {
      await rs.close();
      await as.close();
    }
  }

  /** A new connection of the organization's App on `url` (registered on first use). */
  async function connect(secret: string, url: string): Promise<string> {
    const registered = await post(secret, '/v1/apps', { url });
    const appId = registered.status === 201 ? (registered.body as { id: string }).id : (registered.body as { appId: string }).appId;
    const created = await post(secret, `/v1/apps/${appId}/connections`, { owner: 'organization' }).expect(201);
    return (created.body as { id: string }).id;
  }

  /** Starts a sign-in and plays the browser to just before OpenBot's callback: answers the callback's path and query. */
  async function signIn(secret: string, connectionId: string): Promise<string> {
    const res = await post(secret, `/v1/connections/${connectionId}/authorize`, { loopbackRedirect: LOOPBACK_LISTENER }).expect(200);
    const run = await new TestBrowser().navigate((res.body as { authorizationUrl: string }).authorizationUrl, (next) => next.href.startsWith(`${PUBLIC_URL}/`));
    if (run.stoppedAt === null) throw new Error(`the browser did not reach the callback: ${run.response?.status}`);
    const stop = new URL(run.stoppedAt);
    return `${stop.pathname}${stop.search}`;
  }

  async function authorized(secret: string, connectionId: string): Promise<void> {
    const done = await completeByLoopback(t, secret, await signIn(secret, connectionId));
    expect({ status: done.status, state: (done.body as { state: string }).state }).toEqual({ status: 200, state: 'ready' });
  }

  /** Polls a condition the server reaches on its own; never the clock as an assertion. */
  async function until<T>(what: string, read: () => Promise<T | null | undefined | false>): Promise<T> {
    for (let i = 0; i < 600; i++) {
      const value = await read();
      if (value !== null && value !== undefined && value !== false) return value;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`never: ${what}`);
  }

  const stateOf = async (executionId: string): Promise<string> =>
    (await t.database.query<{ state: string }>('SELECT state FROM executions WHERE id = $1', [executionId]))[0]!.state;
  const ended = (executionId: string): Promise<string> =>
    until(`${executionId} ended`, async () => {
      const state = await stateOf(executionId);
      return ['completed', 'failed', 'cancelled', 'interrupted'].includes(state) ? state : null;
    });
  const exchangeOf = (connectionId: string): Promise<string> =>
    until('the exchange execution', async () => {
      const [row] = await t.database.query<{ id: string | null }>('SELECT exchange_execution_id AS id FROM app_oauth_authorizations WHERE connection_id = $1 ORDER BY created_at DESC LIMIT 1', [connectionId]);
      return row?.id ?? null;
    });

  describe('[GRANT-02] the credential, its call ID and the final event', () => {
    it('[GRANT-02] commit in one transaction: the grant row with its tokens and call ID, the result marked installed, the holder record and the execution.ended event carry one transaction ID', () =>
      servers(async ({ rs }) => {
        const org = await t.createOrganization('Grant tx');
        const connectionId = await connect(org.secret, rs.url);
        await authorized(org.secret, connectionId);
        const exchangeId = await exchangeOf(connectionId);
        const [grant] = await t.database.query<{ id: string; xmin: string; installed_call_id: string; tokens_record_id: string }>(
          'SELECT id, xmin::text AS xmin, installed_call_id, tokens_record_id FROM app_oauth_grants WHERE connection_id = $1',
          [connectionId],
        );
        const [call] = await t.database.query<{ id: string }>(`SELECT id FROM execution_calls WHERE execution_id = $1 AND status = 'succeeded'`, [exchangeId]);
        expect(grant!.installed_call_id).toBe(call!.id);
        const [result] = await t.database.query<{ xmin: string; tokens_record_id: string }>('SELECT xmin::text AS xmin, tokens_record_id FROM app_oauth_grant_results WHERE call_id = $1', [call!.id]);
        expect(result!.tokens_record_id).toBe(grant!.tokens_record_id);
        const [holder] = await t.database.query<{ xmin: string }>(`SELECT xmin::text AS xmin FROM app_oauth_grant_uses WHERE id = $1 AND kind = 'holder'`, [grant!.id]);
        const [endedEvent] = await t.database.query<{ xmin: string }>(`SELECT xmin::text AS xmin FROM execution_events WHERE execution_id = $1 AND type = 'execution.ended'`, [exchangeId]);
        expect({ result: result!.xmin, holder: holder!.xmin, ended: endedEvent!.xmin }).toEqual({ result: grant!.xmin, holder: grant!.xmin, ended: grant!.xmin });
      }));

    it('[GRANT-02] a fault after the grant row is written and before the end commits leaves none of the three: no grant, no installed call ID, no completed end; the unused pair still goes to cleanup and is revoked', () =>
      servers(async ({ as, rs }) => {
        const org = await t.createOrganization('Grant fault');
        const connectionId = await connect(org.secret, rs.url);
        // The holder record is written after the grant row in the end's transaction: refusing it fails that transaction.
        await t.database.query(`CREATE FUNCTION refuse_grant_holder() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN IF NEW.holder_id = '${connectionId}' AND NEW.kind = 'holder' THEN RAISE EXCEPTION 'fault between grant and final event'; END IF; RETURN NEW; END $$`);
        await t.database.query('CREATE TRIGGER refuse_grant_holder BEFORE INSERT ON app_oauth_grant_uses FOR EACH ROW EXECUTE FUNCTION refuse_grant_holder()');
        try {
          const done = await completeByLoopback(t, org.secret, await signIn(org.secret, connectionId));
          expect(done.status).toBeLessThan(500);
          const exchangeId = await exchangeOf(connectionId);
          expect(await ended(exchangeId)).toBe('failed');
          expect(await t.database.query('SELECT 1 FROM app_oauth_grants WHERE connection_id = $1', [connectionId])).toEqual([]);
          // GRANT-05: its pending send went with its (failed) end; no holder record came.
          expect(await t.database.query('SELECT kind FROM app_oauth_grant_uses WHERE id = $1 OR holder_id = $2', [exchangeId, connectionId])).toEqual([]);
          const events = await t.database.query<{ type: string }>('SELECT type FROM execution_events WHERE execution_id = $1 ORDER BY seq', [exchangeId]);
          expect(events.filter((e) => e.type === 'execution.ended')).toHaveLength(1);
          const view = await t.http().get(`/v1/executions/${exchangeId}`).set('authorization', bearer(org.secret)).expect(200);
          expect(view.body).toMatchObject({ state: 'failed', category: 'internal', errorId: expect.any(String) });
          expect((await t.http().get(`/v1/connections/${connectionId}`).set('authorization', bearer(org.secret)).expect(200)).body).toMatchObject({ state: 'needs_authorization' });
          // The pair the call obtained was never installed: its result keeps no installed mark, and its cleanup revokes it.
          const [result] = await t.database.query<{ installed: boolean; cleanup_execution_id: string }>(
            `SELECT installed_at IS NOT NULL AS installed, cleanup_execution_id FROM app_oauth_grant_results WHERE source_execution_id = $1 AND kind = 'exchange'`,
            [exchangeId],
          );
          expect(result).toEqual({ installed: false, cleanup_execution_id: expect.any(String) });
          expect(await ended(result!.cleanup_execution_id)).toBe('completed');
          expect(as.revocations).toEqual(['refresh_token']);
        } finally {
          await t.database.query('DROP TRIGGER refuse_grant_holder ON app_oauth_grant_uses');
          await t.database.query('DROP FUNCTION refuse_grant_holder()');
        }
      }));
  });
});

export type { Client };

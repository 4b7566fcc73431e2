import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addMember, bearer } from '../support/chat-fixture';
import { expectDeclared } from '../support/api-assertions';
import { PROOF_SERVER_CA_FILE, proveApp, startProofServer, type ProofServer } from '../support/app-proof-server';
import { startAuthorizationServer, type TestAuthorizationServer } from '../support/oauth-authorization-server';
import { TestBrowser } from '../support/oidc-provider';
import { completedByLoopback, LOOPBACK_LISTENER } from '../support/app-oauth-sign-in';
import type { Response } from 'supertest';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';
import { startSdkServer, type RunningSdkServer, type TestTool } from '../fakes/mcp-test-servers';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fakes/mcp-protected-server';

/**
 * Developer tests of Apps (DEVT-01) with values and with the developer's own OAuth grant, over
 * the public API. The App domain is proven by a real HTTPS server (test/support/app-proof-server);
 * the Apps are an MCP SDK server behind a Server Card with a variable and a header, and an MCP
 * server protected by a real OAuth authorization server (oidc-provider), whose browser part is
 * played by TestBrowser up to OpenBot's callback.
 */
describe('App developer tests', () => {
  const PUBLIC_URL = 'http://127.0.0.1:8080';
  const LITERAL = 'developer-literal-key-5b1e';
  const SECRET = 'developer-vault-key-9c2d';
  let t: TestApp;
  let sdk: RunningSdkServer;
  let cards: Server;
  let cardUrl: string;
  let proofs: ProofServer;
  const add: TestTool = { name: 'add_numbers', inputSchema: { type: 'object', properties: { a: { type: 'number' } } }, handler: async (a) => ({ text: String(a.a) }) };

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_EGRESS_CA_FILE: PROOF_SERVER_CA_FILE, OPENBOT_PUBLIC_URL: PUBLIC_URL } });
    sdk = await startSdkServer({ era: 'legacy', tools: () => [add] });
    proofs = await startProofServer();
    cards = createServer((_req, res) => {
      const remote = { type: 'streamable-http', url: sdk.url.replace('/mcp', '/{path}'), variables: { path: { choices: ['mcp', 'other'] } }, headers: [{ name: 'X-Dev-Key', isSecret: true, isRequired: true }] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'io.example/dev', version: '1.0.0', remotes: [remote] }));
    });
    await new Promise<void>((resolve) => cards.listen(0, '127.0.0.1', resolve));
    cardUrl = `http://127.0.0.1:${(cards.address() as AddressInfo).port}/server-card`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => (cards ? cards.close(() => resolve()) : resolve()));
    await proofs?.close();
    await sdk?.close();
    await t?.close();
  });

  const post = (secret: string, path: string, body: unknown = {}) => t.http().post(path).set('authorization', bearer(secret)).send(body as object);
  const get = (secret: string, path: string) => t.http().get(path).set('authorization', bearer(secret));
  const issuePaths = (res: { body: unknown }): string[] => (res.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path);

  /** Reads the test until it is in `state` (the run moves on its own). */
  async function testIn(secret: string, appId: string, testId: string, state: string): Promise<Record<string, unknown>> {
    for (let i = 0; ; i++) {
      const body = (await get(secret, `/v1/apps/${appId}/developer-tests/${testId}`).expect(200)).body as Record<string, unknown>;
      if (body.state === state) return body;
      if (i > 400) throw new Error(`developer test ${testId} is ${String(body.state)}, not ${state}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** Plays the browser from the authorization URL to just before OpenBot's callback; answers the callback's path and query. */
  /** Waits (10 s at most) for a grant cleanup execution to complete; the assertions after it say what it did. */
  async function cleanupEnded(executionId: string): Promise<void> {
    for (let i = 0; i < 400 && (await t.database.query(`SELECT 1 FROM executions WHERE id = $1 AND state = 'completed'`, [executionId])).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  }

  async function playBrowser(authorizationUrl: string): Promise<string> {
    const run = await new TestBrowser().navigate(authorizationUrl, (next) => next.href.startsWith(`${PUBLIC_URL}/`));
    if (run.stoppedAt === null) throw new Error(`the browser did not reach the callback: ${run.response?.status}`);
    const stop = new URL(run.stoppedAt);
    return `${stop.pathname}${stop.search}`;
  }

  async function vaultItem(secret: string, allowedHosts: string[]): Promise<string> {
    const vault = (await post(secret, '/v1/vaults', { name: `v-${Math.random().toString(16).slice(2, 8)}` }).expect(201)).body as { id: string };
    return ((await post(secret, `/v1/vaults/${vault.id}/items`, { name: 'dev key', fields: { key: SECRET }, allowedHosts }).expect(201)).body as { id: string }).id;
  }

  it('[DEVT-01] a developer test takes variables and headers with the rules of App connections: bad ones are 400 on their fields, literals are sealed and answered as null, Vault references are checked for the caller, and the run sends them', async () => {
    const org = await t.createOrganization('Developer values');
    const app = (await post(org.secret, '/v1/apps', { url: cardUrl }).expect(201)).body as { id: string };
    await proveApp(t, org.secret, app.id, proofs);
    const start = (body: unknown) => post(org.secret, `/v1/apps/${app.id}/developer-tests`, body);

    const missing = await start({ variables: { path: 'nope' } });
    expectDeclared(missing, 400, 'InvalidInput');
    expect(issuePaths(missing)).toEqual(['variables.path', 'headers.X-Dev-Key']);
    expect(issuePaths(await start({ variables: { path: 'mcp', other: 'x' }, headers: { 'X-Dev-Key': 'k' } }))).toEqual(['variables.other']);
    expect(issuePaths(await start({ variables: { path: 'mcp' }, headers: { 'X-Dev-Key': 5 } }))).toEqual(['headers.X-Dev-Key']);
    expect(issuePaths(await start({ variables: { path: 'mcp' }, headers: { 'X-Dev-Key': 'k', Host: 'elsewhere' } }))).toEqual(['headers.Host']);
    const elsewhere = await vaultItem(org.secret, ['api.example.com']);
    expect(issuePaths(await start({ variables: { path: 'mcp' }, headers: { 'X-Dev-Key': { vaultItemId: elsewhere, field: 'key' } } }))).toEqual(['headers.X-Dev-Key']);
    expect(await t.database.query('SELECT 1 FROM app_developer_tests WHERE app_id = $1', [app.id])).toEqual([]);

    // A literal: sealed while the run needs it, answered as null, sent by the run, gone with its end.
    const from = sdk.requests.length;
    const literal = (await start({ variables: { path: 'mcp' }, headers: { 'X-Dev-Key': LITERAL } }).expect(202)).body as { id: string; executionId: string };
    await waitForExecutionState(t, org.secret, literal.executionId, 'completed');
    const read = (await get(org.secret, `/v1/apps/${app.id}/developer-tests/${literal.id}`).expect(200)).body as Record<string, unknown>;
    expect(read).toMatchObject({ state: 'completed', variables: { path: null }, headers: { 'X-Dev-Key': null }, tools: ['add_numbers'], authorizationUrl: null, authorizationId: null, connection: { state: 'ready', closed: 'deleted' } });
    expect(sdk.requests.slice(from).filter((r) => r.rpc === 'tools/list').map((r) => r.headers?.['x-dev-key'])).toEqual([LITERAL]);
    const [row] = await t.database.query<{ secrets_record_id: string | null; n: number }>(
      `SELECT secrets_record_id, (SELECT count(*)::int FROM app_developer_tests d WHERE strpos(d::text, $2) > 0) AS n FROM app_developer_tests WHERE id = $1`,
      [literal.id, LITERAL],
    );
    expect(row).toEqual({ secrets_record_id: null, n: 0 });

    // A Vault reference the caller may use: answered as given, opened for the run's sends.
    const itemId = await vaultItem(org.secret, ['127.0.0.1']);
    const reference = { vaultItemId: itemId, field: 'key', prefix: 'Key ' };
    const before = sdk.requests.length;
    const referenced = (await start({ variables: { path: 'mcp' }, headers: { 'X-Dev-Key': reference } }).expect(202)).body as { id: string; executionId: string };
    await waitForExecutionState(t, org.secret, referenced.executionId, 'completed');
    const shown = (await get(org.secret, `/v1/apps/${app.id}/developer-tests/${referenced.id}`).expect(200)).body as Record<string, unknown>;
    expect(shown).toMatchObject({ state: 'completed', headers: { 'X-Dev-Key': reference } });
    expect(JSON.stringify(shown)).not.toContain(SECRET);
    expect(sdk.requests.slice(before).filter((r) => r.rpc === 'tools/list').map((r) => r.headers?.['x-dev-key'])).toEqual([`Key ${SECRET}`]);
  });

  describe('with the developer’s own OAuth grant', () => {
    let as: TestAuthorizationServer;
    let rs: ProtectedMcpServer;
    beforeEach(async () => {
      as = await startAuthorizationServer();
      rs = await startProtectedMcpServer(as);
    });
    afterEach(async () => {
      await rs?.close();
      await as?.close();
    });

    /** An App on the protected server with a verified proof, and a started developer test of it that waits for its developer's sign-in. */
    async function waitingTest(secret: string): Promise<{ appId: string; id: string; executionId: string; authorizationId: string; authorizationUrl: string; secret: string }> {
      const app = (await post(secret, '/v1/apps', { url: rs.url }).expect(201)).body as { id: string };
      await proveApp(t, secret, app.id, proofs);
      const started = (await post(secret, `/v1/apps/${app.id}/developer-tests`, {}).expect(202)).body as { id: string; executionId: string };
      const waiting = await testIn(secret, app.id, started.id, 'needs_authorization');
      // The test shows OpenBot's start URL (decision 066); a developer with an API key binds it to a loopback listener and gets the authorization server's URL.
      // Its id comes on its own, the one in the start URL: a client binds it without taking the URL apart.
      const authorizationId = waiting.authorizationId as string;
      expect(authorizationId).toMatch(/^[0-9a-f-]{36}$/);
      expect(waiting.authorizationUrl).toBe(`${PUBLIC_URL}/v1/oauth/authorizations/${authorizationId}/start`);
      const bound = (await post(secret, `/v1/oauth/authorizations/${authorizationId}/loopback`, { redirect: LOOPBACK_LISTENER }).expect(200)).body as { authorizationUrl: string };
      return { appId: app.id, ...started, authorizationId, authorizationUrl: bound.authorizationUrl, secret };
    }

    /** The browser reaches the callback, which relays to the developer's listener; the developer posts the answer with their key. */
    async function signIn(test: { authorizationUrl: string; secret: string }): Promise<Response> {
      return completedByLoopback(t, test.secret, await playBrowser(test.authorizationUrl));
    }

    it('[DEVT-01] a 401 with OAuth discovery: sign-in preparation runs in the common workflow, the developer signs in at the registration’s callback, and the test lists tools with the developer’s own grant', async () => {
      const org = await t.createOrganization('Developer grant');
      const test = await waitingTest(org.secret);
      const url = new URL(test.authorizationUrl);
      expect(url.origin).toBe(as.issuer);
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
      expect(url.searchParams.get('resource')).toBe(rs.url);
      expect(url.searchParams.get('redirect_uri')).toMatch(new RegExp(`^${PUBLIC_URL}/v1/oauth/[0-9a-f-]{36}/callback$`));
      // Sign-in preparation is the common workflow, a child of the test's run.
      expect(await t.database.query('SELECT workflow, state, resource_type, resource_id FROM executions WHERE parent_id = $1', [test.executionId])).toEqual([
        { workflow: 'app.oauth.prepare', state: 'completed', resource_type: 'app-developer-test', resource_id: test.id },
      ]);
      // The URL is its developer's: another admin of the organization reads the test without it.
      const admin = await addMember(t, org.organizationId, 'admin');
      expect((await get(admin.secret, `/v1/apps/${test.appId}/developer-tests/${test.id}`).expect(200)).body).toMatchObject({ state: 'needs_authorization', authorizationUrl: null, authorizationId: null });

      expect(url.searchParams.get('prompt')).toBe('consent');
      const done = await signIn(test);
      expect(done.body).toMatchObject({ connectionId: null, developerTestId: test.id, reason: null });
      await waitForExecutionState(t, org.secret, test.executionId, 'completed');
      const read = (await get(org.secret, `/v1/apps/${test.appId}/developer-tests/${test.id}`).expect(200)).body as Record<string, unknown>;
      expect(read).toMatchObject({ state: 'completed', tools: ['whoami'], authorizationUrl: null, authorizationId: null, memberId: org.memberId, connection: { state: 'ready', closed: expect.any(String) } });
      // The grant came from this sign-in: the resource server accepted a token of it.
      expect(rs.accepted.length).toBeGreaterThan(0);

      const events = (await get(org.secret, `/v1/executions/${test.executionId}/events`).expect(200)).body as { events: Array<Record<string, unknown> & { type: string }> };
      const types = events.events.map((e) => e.type);
      const needs = types.indexOf('developer_test.needs_authorization');
      // The event names the same authorization as the test did, next to its start URL.
      expect(events.events[needs]).toMatchObject({ testId: test.id, authorizationId: test.authorizationId, authorizationUrl: `${PUBLIC_URL}/v1/oauth/authorizations/${test.authorizationId}/start` });
      expect(needs).toBeGreaterThan(types.indexOf('developer_test.connected'));
      expect(types.lastIndexOf('developer_test.connected')).toBeGreaterThan(needs);
      expect(types.indexOf('developer_test.tools')).toBeGreaterThan(types.lastIndexOf('developer_test.connected'));
      expect(types.indexOf('execution.ended')).toBeGreaterThan(types.indexOf('developer_test.closed'));
    });

    it('[DEVT-01][GRANT-05] the end of a developer test hands its developer’s grant to service cleanup with its holder record, and cleanup revokes it at the server', async () => {
      const org = await t.createOrganization('Developer grant end');
      const test = await waitingTest(org.secret);
      const done = await signIn(test);
      await waitForExecutionState(t, org.secret, test.executionId, 'completed');
      const exchange = (done.body as { executionId: string }).executionId;
      const [installed] = await t.database.query<{ id: string }>(`SELECT id FROM app_oauth_grant_results WHERE source_execution_id = $1 AND kind = 'exchange' AND installed_at IS NOT NULL`, [exchange]);
      // GRANT-05: the grant and its holder record (the developer test) went with the end; the pair is a `removed` result with its cleanup.
      expect(await t.database.query('SELECT 1 FROM app_oauth_grants WHERE developer_test_id = $1', [test.id])).toEqual([]);
      expect(await t.database.query(`SELECT 1 FROM app_oauth_grant_uses WHERE holder_type = 'developer_test' AND holder_id = $1`, [test.id])).toEqual([]);
      const [removed] = await t.database.query<{ id: string; cleanup_execution_id: string }>(`SELECT id, cleanup_execution_id FROM app_oauth_grant_results WHERE call_id = $1`, [`grant:${installed!.id}:v1:removed`]);
      const [cleanup] = await t.database.query<{ scope_kind: string }>('SELECT scope_kind FROM executions WHERE id = $1', [removed!.cleanup_execution_id]);
      expect(cleanup).toEqual({ scope_kind: 'service' });
      await cleanupEnded(removed!.cleanup_execution_id);
      expect(await t.database.query('SELECT revocation, tokens_record_id FROM app_oauth_grant_results WHERE id = $1', [removed!.id])).toEqual([{ revocation: { kind: 'revoked' }, tokens_record_id: null }]);
      expect(as.revocations).toEqual(['refresh_token']);
      expect(await as.findAccessToken(rs.accepted.at(-1)!)).toBeNull();
    });

    it('[DEVT-01][GRANT-03] removing a test while its run holds a connection with the grant hands the grant to cleanup in that transaction; the revocation waits until the run has ended', async () => {
      const org = await t.createOrganization('Developer grant removed');
      const test = await waitingTest(org.secret);
      let release: () => void = () => undefined;
      rs.holdAccepted(new Promise<void>((resolve) => (release = resolve)));
      try {
        await signIn(test);
        // The run connects with the grant; the server holds its request open.
        await rs.held();
        const [grant] = await t.database.query<{ id: string }>('SELECT id FROM app_oauth_grants WHERE developer_test_id = $1', [test.id]);
        expect(await t.database.query(`SELECT holder_type FROM app_oauth_grant_uses WHERE id = $1`, [grant!.id])).toEqual([{ holder_type: 'developer_test' }]);
        expect((await t.http().delete(`/v1/apps/${test.appId}/developer-tests/${test.id}`).set('authorization', bearer(org.secret)).expect(200)).body).toEqual({ id: test.id });
        // In the removal's transaction: the grant and its holder record are gone, the pair is a `removed` result waiting for the run.
        expect(await t.database.query('SELECT 1 FROM app_oauth_grants WHERE id = $1', [grant!.id])).toEqual([]);
        expect(await t.database.query('SELECT 1 FROM app_oauth_grant_uses WHERE id = $1', [grant!.id])).toEqual([]);
        const [removed] = await t.database.query<{ id: string; source_execution_id: string; cleanup_execution_id: string }>(
          `SELECT id, source_execution_id, cleanup_execution_id FROM app_oauth_grant_results WHERE call_id = $1`,
          [`grant:${grant!.id}:v1:removed`],
        );
        expect(removed!.source_execution_id).toBe(test.executionId);
        expectDeclared(await get(org.secret, `/v1/apps/${test.appId}/developer-tests/${test.id}`), 404, 'DeveloperTestNotFound');
        release();
        await waitForExecutionState(t, org.secret, test.executionId, 'cancelled');
        await cleanupEnded(removed!.cleanup_execution_id);
        expect(await t.database.query('SELECT revocation FROM app_oauth_grant_results WHERE id = $1', [removed!.id])).toEqual([{ revocation: { kind: 'revoked' } }]);
        // The revocation was sent only after the run ended (its connection closed): the cleanup's call began after the run's end.
        const [order] = await t.database.query<{ after: boolean }>(
          `SELECT (SELECT min(created_at) FROM execution_calls WHERE execution_id = $1) >= (SELECT ended_at FROM executions WHERE id = $2) AS after`,
          [removed!.cleanup_execution_id, test.executionId],
        );
        expect(order).toEqual({ after: true });
        expect(as.revocations).toEqual(['refresh_token']);
      } finally {
        rs.holdAccepted(null);
        release();
      }
    });

    it('[DEVT-01][GRANT-05] deleting the App while its developer test holds a connection with the grant hands that grant to cleanup in the same transaction and cancels the run; the revocation follows the run’s end', async () => {
      const org = await t.createOrganization('Developer grant app deleted');
      const test = await waitingTest(org.secret);
      let release: () => void = () => undefined;
      rs.holdAccepted(new Promise<void>((resolve) => (release = resolve)));
      try {
        await signIn(test);
        await rs.held();
        const [grant] = await t.database.query<{ id: string }>('SELECT id FROM app_oauth_grants WHERE developer_test_id = $1', [test.id]);
        await t.http().delete(`/v1/apps/${test.appId}`).set('authorization', bearer(org.secret)).expect(200);
        expect(await t.database.query('SELECT 1 FROM app_developer_tests WHERE id = $1', [test.id])).toEqual([]);
        expect(await t.database.query('SELECT 1 FROM app_oauth_grant_uses WHERE id = $1', [grant!.id])).toEqual([]);
        const [removed] = await t.database.query<{ id: string; source_execution_id: string; cleanup_execution_id: string }>(
          `SELECT id, source_execution_id, cleanup_execution_id FROM app_oauth_grant_results WHERE call_id = $1`,
          [`grant:${grant!.id}:v1:removed`],
        );
        expect(removed!.source_execution_id).toBe(test.executionId);
        release();
        await waitForExecutionState(t, org.secret, test.executionId, 'cancelled');
        await cleanupEnded(removed!.cleanup_execution_id);
        expect(await t.database.query('SELECT revocation FROM app_oauth_grant_results WHERE id = $1', [removed!.id])).toEqual([{ revocation: { kind: 'revoked' } }]);
        expect(as.revocations).toEqual(['refresh_token']);
      } finally {
        rs.holdAccepted(null);
        release();
      }
    });

    it('[DEVT-01] removing a test that waits for its sign-in cancels its run, and a late callback of that sign-in is refused before its code is sent', async () => {
      const org = await t.createOrganization('Developer sign-in removed');
      const test = await waitingTest(org.secret);
      await t.http().delete(`/v1/apps/${test.appId}/developer-tests/${test.id}`).set('authorization', bearer(org.secret)).expect(200);
      await waitForExecutionState(t, org.secret, test.executionId, 'cancelled');
      const tokenCalls = as.tokenRequests.length;
      const late = await t.http().get(await playBrowser(test.authorizationUrl));
      expectDeclared(late, 400, 'InvalidInput');
      expect(issuePaths(late)).toEqual(['state']);
      expect(as.tokenRequests.length).toBe(tokenCalls);
      // Another organization reaches none of it.
      const other = await t.createOrganization('Developer sign-in other');
      expectDeclared(await t.http().delete(`/v1/apps/${test.appId}/developer-tests/${test.id}`).set('authorization', bearer(other.secret)), 404, 'DeveloperTestNotFound');
    });
  });
});

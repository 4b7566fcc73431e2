import { bearer } from '../support/chat-fixture';
import { expectDeclared } from '../support/api-assertions';
import { startAuthorizationServer, type TestAuthorizationServer } from '../support/oauth-authorization-server';
import { TestBrowser } from '../support/oidc-provider';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fakes/mcp-protected-server';

/**
 * App OAuth over the public API: a connection to an MCP server protected by a real OAuth
 * authorization server (oidc-provider: dynamic registration, resource indicators, PKCE S256,
 * rotating refresh tokens with reuse detection, revocation) in front of an SDK resource server
 * (its bearer middleware). The browser is played by TestBrowser; it stops before OpenBot's
 * callback, which the test then calls through the API.
 */
describe('App OAuth', () => {
  const PUBLIC_URL = 'http://127.0.0.1:8080';
  let t: TestApp;
  let as: TestAuthorizationServer;
  let rs: ProtectedMcpServer;

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_PUBLIC_URL: PUBLIC_URL } });
    as = await startAuthorizationServer();
    rs = await startProtectedMcpServer(as);
  });
  afterAll(async () => {
    await rs?.close();
    await as?.close();
    await t?.close();
  });

  const post = (secret: string, path: string, body: unknown = {}) => t.http().post(path).set('authorization', bearer(secret)).send(body as object);
  const get = (secret: string, path: string) => t.http().get(path).set('authorization', bearer(secret));

  /** An App on the protected server and one connection of it (the probe finds it needs authorization). */
  async function connect(secret: string, url = rs.url, owner: 'organization' | 'member' = 'organization'): Promise<string> {
    const app = (await post(secret, '/v1/apps', { url }).expect(201)).body as { id: string };
    const created = await post(secret, `/v1/apps/${app.id}/connections`, { owner }).expect(201);
    expect(created.body).toMatchObject({ state: 'needs_authorization' });
    return (created.body as { id: string }).id;
  }

  /** Plays the browser from the authorization URL to just before OpenBot's callback; answers the callback's path and query. */
  async function playBrowser(authorizationUrl: string, account = 'ana'): Promise<string> {
    as.signInAs(account);
    const browser = new TestBrowser();
    const run = await browser.navigate(authorizationUrl, (next) => next.href.startsWith(`${PUBLIC_URL}/`));
    if (run.stoppedAt === null) throw new Error(`the browser did not reach the callback: ${run.response?.status} ${await run.response?.text()}`);
    const stop = new URL(run.stoppedAt);
    return `${stop.pathname}${stop.search}`;
  }

  async function authorize(secret: string, connectionId: string, account = 'ana'): Promise<{ callback: string; registrationId: string }> {
    const res = await post(secret, `/v1/connections/${connectionId}/authorize`).expect(200);
    const url = new URL((res.body as { authorizationUrl: string }).authorizationUrl);
    const registrationId = /\/v1\/oauth\/([0-9a-f-]+)\/callback$/.exec(url.searchParams.get('redirect_uri') ?? '')![1]!;
    return { callback: await playBrowser(url.href, account), registrationId };
  }

  it('[GRANT-02] connect, authorize by playing the browser, and the installed grant’s token is the Authorization of App requests', async () => {
    const org = await t.createOrganization('OAuth');
    const connectionId = await connect(org.secret);
    const res = await post(org.secret, `/v1/connections/${connectionId}/authorize`).expect(200);
    const url = new URL((res.body as { authorizationUrl: string }).authorizationUrl);
    expect(url.origin).toBe(as.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('resource')).toBe(rs.url);
    expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('redirect_uri')).toMatch(new RegExp(`^${PUBLIC_URL}/v1/oauth/[0-9a-f-]{36}/callback$`));

    const callback = await playBrowser(url.href);
    const done = await t.http().get(callback).expect(200);
    expect(done.body).toMatchObject({ connectionId, state: 'ready', reason: null });
    // RFC 8707: the same resource on the token request.
    expect(as.tokenRequests.filter((r) => r.grantType === 'authorization_code').at(-1)).toEqual({ grantType: 'authorization_code', resource: rs.url });

    // GRANT-02: the grant names the call whose result it installed; that result is marked installed.
    const [grant] = await t.database.query<{ installed_call_id: string; state: string }>('SELECT installed_call_id, state FROM app_oauth_grants WHERE connection_id = $1', [connectionId]);
    const [call] = await t.database.query<{ id: string; status: string }>(`SELECT id, status FROM execution_calls WHERE execution_id = $1`, [(done.body as { executionId: string }).executionId]);
    expect(grant).toEqual({ installed_call_id: call!.id, state: 'active' });
    const [result] = await t.database.query<{ installed: boolean }>('SELECT installed_at IS NOT NULL AS installed FROM app_oauth_grant_results WHERE call_id = $1', [call!.id]);
    expect(result).toEqual({ installed: true });

    const before = rs.accepted.length;
    const tools = await get(org.secret, `/v1/connections/${connectionId}/tools`).expect(200);
    expect((tools.body as { data: Array<{ name: string }> }).data.map((tool) => tool.name)).toEqual(['whoami']);
    expect(rs.accepted.length).toBeGreaterThan(before);
    const checked = await post(org.secret, `/v1/connections/${connectionId}/check`).expect(202);
    await waitForExecutionState(t, org.secret, (checked.body as { executionId: string }).executionId, 'completed');
    expect((await get(org.secret, `/v1/connections/${connectionId}`).expect(200)).body).toMatchObject({ state: 'ready' });
  });

  it('mix-up defence: a state is refused at another registration’s callback before its code is sent, and a wrong iss is refused (RFC 9207)', async () => {
    const org = await t.createOrganization('MixUp');
    const otherAs = await startAuthorizationServer();
    const otherRs = await startProtectedMcpServer(otherAs);
    try {
      const first = await connect(org.secret);
      const second = await connect(org.secret, otherRs.url);
      const a = await authorize(org.secret, first);
      const b = await authorize(org.secret, second);
      expect(a.registrationId).not.toBe(b.registrationId);
      const exchangesBefore = as.tokenRequests.length + otherAs.tokenRequests.length;

      // A's code and state relayed to B's callback: refused on the state, nothing sent to either server.
      const relayed = await t.http().get(a.callback.replace(`/v1/oauth/${a.registrationId}/`, `/v1/oauth/${b.registrationId}/`));
      expectDeclared(relayed, 400, 'InvalidInput');
      expect((relayed.body as { issues: Array<{ path: string }> }).issues.map((issue) => issue.path)).toEqual(['state']);

      // The right callback with another issuer's iss: 401, still nothing sent.
      const forged = new URL(a.callback, PUBLIC_URL);
      forged.searchParams.set('iss', otherAs.issuer);
      const refused = await t.http().get(`${forged.pathname}${forged.search}`);
      expectDeclared(refused, 401, 'Unauthenticated');
      expect(as.tokenRequests.length + otherAs.tokenRequests.length).toBe(exchangesBefore);

      // The genuine callback still works once, and only once.
      await t.http().get(a.callback).expect(200);
      expectDeclared(await t.http().get(a.callback), 400, 'InvalidInput');
      expect((await get(org.secret, `/v1/connections/${first}`).expect(200)).body).toMatchObject({ state: 'ready' });
    } finally {
      await otherRs.close();
      await otherAs.close();
    }
  });

  it('refuses an authorization server that does not advertise PKCE S256, before any registration', async () => {
    const org = await t.createOrganization('NoPkce');
    const noPkce = await startAuthorizationServer();
    noPkce.rewriteDiscovery((document) => delete document.code_challenge_methods_supported);
    const server = await startProtectedMcpServer(noPkce);
    try {
      const connectionId = await connect(org.secret, server.url);
      const res = await post(org.secret, `/v1/connections/${connectionId}/authorize`);
      expectDeclared(res, 409, 'AppAuthorizationRefused');
      expect((res.body as { message: string }).message).toContain('pkce_unsupported');
      expect(noPkce.requests.some((path) => path.startsWith('/reg'))).toBe(false);
    } finally {
      await server.close();
      await noPkce.close();
    }
  });

  it('registrations are keyed by issuer: a second connection to the same server reuses the registration and its callback', async () => {
    const org = await t.createOrganization('SameIssuer');
    const one = await authorize(org.secret, await connect(org.secret));
    const two = await authorize(org.secret, await connect(org.secret));
    expect(two.registrationId).toBe(one.registrationId);
    const rows = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM app_oauth_registrations WHERE issuer = $1', [as.issuer]);
    expect(rows[0]!.n).toBe(1);
  });

  /** A ready connection of a new organization, authorized as `account`. */
  async function readyConnection(name: string): Promise<{ secret: string; connectionId: string; registrationId: string }> {
    const org = await t.createOrganization(name);
    const connectionId = await connect(org.secret);
    const { callback, registrationId } = await authorize(org.secret, connectionId);
    expect((await t.http().get(callback).expect(200)).body).toMatchObject({ state: 'ready' });
    return { secret: org.secret, connectionId, registrationId };
  }

  const check = async (node: TestApp, secret: string, connectionId: string): Promise<void> => {
    const res = await node.http().post(`/v1/connections/${connectionId}/check`).set('authorization', bearer(secret)).send({}).expect(202);
    await waitForExecutionState(node, secret, (res.body as { executionId: string }).executionId, 'completed');
  };
  const refreshes = (): number => as.tokenRequests.filter((r) => r.grantType === 'refresh_token').length;

  it('two nodes, parallel 401s on one grant: exactly one refresh (single-flight, compare-and-swap), and every call succeeds with the new token', async () => {
    const { secret, connectionId } = await readyConnection('Parallel');
    await check(t, secret, connectionId);
    const t2 = await startTestApp({ database: t.database, masterKey: t.config.masterKey, env: { OPENBOT_PUBLIC_URL: PUBLIC_URL } });
    try {
      rs.refuseTokensSeenSoFar();
      const before = refreshes();
      const refusedBefore = rs.refusals();
      // The refresh is held at the authorization server until both nodes got their 401: they overlap for sure.
      as.hold('/token', rs.refused(refusedBefore + 2));
      await Promise.all([check(t, secret, connectionId), check(t2, secret, connectionId)]);
      as.hold('/token', null);
      await Promise.all([check(t, secret, connectionId), check(t2, secret, connectionId)]);
      expect(rs.refusals()).toBeGreaterThanOrEqual(refusedBefore + 2);
      expect(refreshes()).toBe(before + 1);
      // The rotated pair was saved once, by compare-and-swap; the connection stayed ready (no invalid_grant, no revoked family).
      const [grant] = await t.database.query<{ version: number; state: string; refresh_intent: string | null }>('SELECT version, state, refresh_intent FROM app_oauth_grants WHERE connection_id = $1', [connectionId]);
      expect(grant).toEqual({ version: 2, state: 'active', refresh_intent: null });
      expect((await get(secret, `/v1/connections/${connectionId}`).expect(200)).body).toMatchObject({ state: 'ready' });
    } finally {
      await t2.close();
    }
  });

  it('invalid_grant on refresh is final only after a re-read; the connection shows needs_authorization, with no retry storm and no silent re-authorization', async () => {
    const { secret, connectionId } = await readyConnection('InvalidGrant');
    await check(t, secret, connectionId);
    rs.refuseTokensSeenSoFar();
    as.failPath('/token', { status: 400, error: 'invalid_grant' });
    try {
      const tokenPosts = (): number => as.requests.filter((path) => path === '/token').length;
      const before = tokenPosts();
      const authorizeRequests = as.requests.filter((path) => path.startsWith('/auth')).length;
      await check(t, secret, connectionId);
      expect((await get(secret, `/v1/connections/${connectionId}`).expect(200)).body).toMatchObject({ state: 'needs_authorization' });
      await check(t, secret, connectionId);
      await check(t, secret, connectionId);
      // One refresh attempt in all, however many calls followed; no new authorization request either.
      expect(tokenPosts()).toBe(before + 1);
      expect(as.requests.filter((path) => path.startsWith('/auth')).length).toBe(authorizeRequests);
      const [grant] = await t.database.query<{ state: string }>('SELECT state FROM app_oauth_grants WHERE connection_id = $1', [connectionId]);
      expect(grant).toEqual({ state: 'needs_authorization' });
    } finally {
      as.failPath('/token', null);
    }
  });

  it('a lost refresh reply makes the grant needs_authorization explicitly: the spent refresh token is never tried again', async () => {
    const { secret, connectionId } = await readyConnection('LostReply');
    await check(t, secret, connectionId);
    rs.refuseTokensSeenSoFar();
    as.failPath('/token', 'drop');
    try {
      const tokenPosts = (): number => as.requests.filter((path) => path === '/token').length;
      const before = tokenPosts();
      await check(t, secret, connectionId);
      expect(tokenPosts()).toBe(before + 1);
      expect((await get(secret, `/v1/connections/${connectionId}`).expect(200)).body).toMatchObject({ state: 'needs_authorization' });
      as.failPath('/token', null);
      await check(t, secret, connectionId);
      expect(tokenPosts()).toBe(before + 1);
    } finally {
      as.failPath('/token', null);
    }
  });
});

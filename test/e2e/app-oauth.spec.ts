import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { addMember, bearer, createChatFixture, eventsUntilEnd, replyText, sendMessage } from '../support/chat-fixture';
import { expectDeclared } from '../support/api-assertions';
import { newId } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { startAuthorizationServer, type TestAuthorizationServer } from '../support/oauth-authorization-server';
import { TestBrowser } from '../support/oidc-provider';
import { completeByLoopback, LOOPBACK_LISTENER } from '../support/app-oauth-sign-in';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fakes/mcp-protected-server';

/**
 * App OAuth over the public API: a connection to an MCP server protected by a real OAuth
 * authorization server (oidc-provider: dynamic registration, resource indicators, PKCE S256,
 * rotating refresh tokens with reuse detection, revocation) in front of an SDK resource server
 * (its bearer middleware). The browser is played by TestBrowser; it stops before OpenBot's
 * callback, which the test then calls through the API. Members here work with API keys: each
 * authorization is bound to a loopback listener, the callback relays to it, and the member posts
 * the answer with their key (decision 066; the browser-bound flow is app-oauth-bound-sign-in.spec.ts).
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

  /** The App on the protected server (registered once per organization) and one new connection of it (the probe finds it needs authorization). */
  async function connect(secret: string, url = rs.url, owner: 'organization' | 'member' = 'organization', registeredBy = secret): Promise<string> {
    // A URL the organization registered before answers 409 AppExists naming that App: its connections share it.
    const registered = await post(registeredBy, '/v1/apps', { url });
    if (registered.status !== 201) expect({ status: registered.status, type: (registered.body as { type: string }).type }).toEqual({ status: 409, type: 'AppExists' });
    const app = { id: registered.status === 201 ? (registered.body as { id: string }).id : (registered.body as { appId: string }).appId };
    const created = await post(secret, `/v1/apps/${app.id}/connections`, { owner }).expect(201);
    expect(created.body).toMatchObject({ state: 'needs_authorization' });
    return (created.body as { id: string }).id;
  }

  /** Plays the browser from the authorization URL to just before OpenBot's callback; answers the callback's path and query. */
  async function playBrowser(authorizationUrl: string): Promise<string> {
    const browser = new TestBrowser();
    const run = await browser.navigate(authorizationUrl, (next) => next.href.startsWith(`${PUBLIC_URL}/`));
    if (run.stoppedAt === null) throw new Error(`the browser did not reach the callback: ${run.response?.status} ${await run.response?.text()}`);
    const stop = new URL(run.stoppedAt);
    return `${stop.pathname}${stop.search}`;
  }

  interface SignIn {
    readonly callback: string;
    readonly registrationId: string;
    readonly secret: string;
  }

  async function authorize(secret: string, connectionId: string): Promise<SignIn> {
    const res = await post(secret, `/v1/connections/${connectionId}/authorize`, { loopbackRedirect: LOOPBACK_LISTENER }).expect(200);
    const url = new URL((res.body as { authorizationUrl: string }).authorizationUrl);
    const registrationId = /\/v1\/oauth\/([0-9a-f-]+)\/callback$/.exec(url.searchParams.get('redirect_uri') ?? '')![1]!;
    return { callback: await playBrowser(url.href), registrationId, secret };
  }

  /** The callback relays to the member's listener; the member posts the answer with their key: the completion's answer (200). */
  async function complete(signIn: SignIn, node: TestApp = t): Promise<{ status: number; body: unknown }> {
    const done = await completeByLoopback(node, signIn.secret, signIn.callback);
    expect({ status: done.status, body: done.body as unknown }).toEqual({ status: 200, body: expect.anything() });
    return done;
  }

  it('[GRANT-02] connect, authorize by playing the browser, and the installed grant’s token is the Authorization of App requests', async () => {
    const org = await t.createOrganization('OAuth');
    const connectionId = await connect(org.secret);
    const res = await post(org.secret, `/v1/connections/${connectionId}/authorize`, { loopbackRedirect: LOOPBACK_LISTENER }).expect(200);
    expect(res.body).toMatchObject({ binding: 'loopback', authorizationId: expect.any(String) });
    const url = new URL((res.body as { authorizationUrl: string }).authorizationUrl);
    expect(url.origin).toBe(as.issuer);
    // Every authorization asks for consent: the client is shared by every organization at the issuer (decision 066).
    expect(url.searchParams.get('prompt')).toBe('consent');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('resource')).toBe(rs.url);
    expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('redirect_uri')).toMatch(new RegExp(`^${PUBLIC_URL}/v1/oauth/[0-9a-f-]{36}/callback$`));

    const done = await complete({ callback: await playBrowser(url.href), registrationId: '', secret: org.secret });
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
      await complete(a);
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
      const res = await post(org.secret, `/v1/connections/${connectionId}/authorize`, { loopbackRedirect: LOOPBACK_LISTENER });
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
    const signIn = await authorize(org.secret, connectionId);
    expect((await complete(signIn)).body).toMatchObject({ state: 'ready' });
    const { registrationId } = signIn;
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

  /** A fresh authorization server and resource server of its own: revocation tests count the revocations their server saw. */
  async function ownServers<T>(work: (servers: { as: TestAuthorizationServer; rs: ProtectedMcpServer }) => Promise<T>, options: Parameters<typeof startAuthorizationServer>[0] = {}): Promise<T> {
    const ownAs = await startAuthorizationServer(options);
    const ownRs = await startProtectedMcpServer(ownAs);
    try {
      return await work({ as: ownAs, rs: ownRs });
    } finally {
      await ownRs.close();
      await ownAs.close();
    }
  }

  /** Polls the engine's row until the execution has ended (service work is not readable through a member's key). */
  async function ended(node: TestApp, executionId: string): Promise<string> {
    for (let i = 0; i < 400; i++) {
      const [row] = await node.database.query<{ state: string }>('SELECT state FROM executions WHERE id = $1', [executionId]);
      if (row !== undefined && ['completed', 'failed', 'cancelled'].includes(row.state)) return row.state;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`execution ${executionId} did not end`);
  }

  interface ResultRow {
    id: string;
    kind: string;
    cleanup_execution_id: string | null;
    revocation: { kind: string } | null;
    tokens_record_id: string | null;
  }
  const resultsOf = (connectionGrantCall: string): Promise<ResultRow[]> =>
    t.database.query<ResultRow>('SELECT id, kind, cleanup_execution_id, revocation, tokens_record_id FROM app_oauth_grant_results WHERE call_id LIKE $1 ORDER BY created_at', [connectionGrantCall]);

  /** Deletes a connection; answers the grant result its cleanup's end handed to grant cleanup (in that end's transaction). */
  async function remove(secret: string, connectionId: string, node: TestApp = t): Promise<ResultRow> {
    const [grant] = await node.database.query<{ id: string }>('SELECT id FROM app_oauth_grants WHERE connection_id = $1', [connectionId]);
    const deleted = await node.http().delete(`/v1/connections/${connectionId}`).set('authorization', bearer(secret)).expect(202);
    // The grant stays while the connection's cleanup ends its sessions (their DELETEs carry its token).
    expect(await ended(node, (deleted.body as { executionId: string }).executionId)).toBe('completed');
    // GRANT-05: the holder record went with the removal; the grant is a `removed` result with its cleanup now.
    expect(await node.database.query('SELECT 1 FROM app_oauth_grant_uses WHERE id = $1', [grant!.id])).toEqual([]);
    expect(await node.database.query('SELECT 1 FROM app_oauth_grants WHERE id = $1', [grant!.id])).toEqual([]);
    const [removed] = await resultsOf(`grant:${grant!.id}:%:removed`);
    expect(removed).toMatchObject({ kind: 'removed', cleanup_execution_id: expect.any(String) });
    return removed!;
  }

  it('[GRANT-05] removing a connection hands its grant to service cleanup in the transaction that removes it, and cleanup revokes it at the server (RFC 7009)', () =>
    ownServers(async (own) => {
      const org = await t.createOrganization('Revoke');
      const connectionId = await connect(org.secret, own.rs.url);
      await complete(await authorize(org.secret, connectionId));
      await check(t, org.secret, connectionId);
      const token = own.rs.accepted.at(-1)!;
      expect(await own.as.findAccessToken(token)).not.toBeNull();
      const removed = await remove(org.secret, connectionId);
      expect(await ended(t, removed.cleanup_execution_id!)).toBe('completed');
      const [after] = await t.database.query<ResultRow>('SELECT id, kind, cleanup_execution_id, revocation, tokens_record_id FROM app_oauth_grant_results WHERE id = $1', [removed.id]);
      expect(after).toMatchObject({ revocation: { kind: 'revoked' }, tokens_record_id: null });
      expect(own.as.revocations).toEqual(['refresh_token']);
      // oidc-provider revokes the grant with its refresh token: the access token is dead too.
      expect(await own.as.findAccessToken(token)).toBeNull();
      const [scope] = await t.database.query<{ scope_kind: string }>('SELECT scope_kind FROM executions WHERE id = $1', [removed.cleanup_execution_id]);
      expect(scope).toEqual({ scope_kind: 'service' });
    }));

  it('[GRANT-07] a server with no revocation endpoint gives a saved LocalOnly result', async () => {
    const plain = await startAuthorizationServer({ revocation: false });
    const server = await startProtectedMcpServer(plain);
    try {
      const org = await t.createOrganization('LocalOnly');
      const connectionId = await connect(org.secret, server.url);
      await complete(await authorize(org.secret, connectionId));
      const removed = await remove(org.secret, connectionId);
      expect(await ended(t, removed.cleanup_execution_id!)).toBe('completed');
      const rows = await t.database.query<{ revocation: unknown }>('SELECT revocation FROM app_oauth_grant_results WHERE id = $1', [removed.id]);
      expect(rows).toEqual([{ revocation: { kind: 'local_only' } }]);
      expect(plain.revocations).toEqual([]);
    } finally {
      await server.close();
      await plain.close();
    }
  });

  it('[GRANT-07] a failed remote revocation is tried again on the common retry timer, and succeeds once the endpoint recovers', async () => {
    const flaky = await startAuthorizationServer();
    const server = await startProtectedMcpServer(flaky);
    try {
      const org = await t.createOrganization('Flaky');
      const connectionId = await connect(org.secret, server.url);
      await complete(await authorize(org.secret, connectionId));
      flaky.failPath('/token/revocation', { status: 503, error: 'temporarily_unavailable' });
      const removed = await remove(org.secret, connectionId);
      for (let i = 0; i < 200 && !flaky.requests.includes('/token/revocation'); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(flaky.requests).toContain('/token/revocation');
      // The revocation intent stays saved while it retries: the grant scope is reserved.
      const [reservation] = await t.database.query<{ kind: string }>('SELECT kind FROM app_oauth_grant_uses WHERE id = $1', [removed.id]);
      expect(reservation).toEqual({ kind: 'revocation' });
      flaky.failPath('/token/revocation', null);
      expect(await ended(t, removed.cleanup_execution_id!)).toBe('completed');
      const rows = await t.database.query<{ revocation: unknown }>('SELECT revocation FROM app_oauth_grant_results WHERE id = $1', [removed.id]);
      expect(rows).toEqual([{ revocation: { kind: 'revoked' } }]);
      expect(flaky.revocations).toEqual(['refresh_token']);
      expect(await t.database.query('SELECT 1 FROM app_oauth_grant_uses WHERE id = $1', [removed.id])).toEqual([]);
    } finally {
      await server.close();
      await flaky.close();
    }
  });

  it('[GRANT-04][GRANT-01] another organization’s grant of the same issuer and client does not hold back cleanup: a removed connection’s refresh token is revoked at once, as a service after the member left, and the other grant keeps working', async () => {
    const shared = await startAuthorizationServer();
    const server = await startProtectedMcpServer(shared);
    try {
      const first = await t.createOrganization('HolderA');
      const second = await t.createOrganization('HolderB');
      const member = await addMember(t, second.organizationId);
      const held = await connect(first.secret, server.url);
      shared.signInAs('ana');
      await complete(await authorize(first.secret, held));
      const own = await connect(member.secret, server.url, 'member', second.secret);
      shared.signInAs('bob');
      await complete(await authorize(member.secret, own));
      // Each holder has its own grant: the member's connection acts as the member's account.
      const whoami = await get(member.secret, `/v1/connections/${own}/tools`).expect(200);
      expect((whoami.body as { data: Array<{ name: string }> }).data.map((tool) => tool.name)).toEqual(['whoami']);
      expect((await shared.findAccessToken(server.accepted.at(-1)!))?.accountId).toBe('bob');
      await check(t, first.secret, held);
      const heldToken = server.accepted.at(-1)!;
      expect((await shared.findAccessToken(heldToken))?.accountId).toBe('ana');
      // Both grants are of one registration (the issuer's shared client).
      const registrations = await t.database.query<{ registration_id: string }>('SELECT DISTINCT registration_id FROM app_oauth_grants WHERE connection_id = ANY($1::uuid[])', [[held, own]]);
      expect(registrations).toHaveLength(1);

      // The organization's owner sees the member's connection but cannot sign in for it: the grant is the member's own.
      expectDeclared(await post(second.secret, `/v1/connections/${own}/authorize`, { loopbackRedirect: LOOPBACK_LISTENER }), 403, 'Forbidden');

      const removed = await remove(member.secret, own);
      // The member leaves: the cleanup is the organization service's, so it still runs.
      await t.http().delete(`/v1/members/${member.memberId}`).set('authorization', bearer(second.secret)).expect(200);
      // The other organization's connection still holds a grant of the same registration: it is another lineage, and does not hold this one back.
      expect(await ended(t, removed.cleanup_execution_id!)).toBe('completed');
      const rows = await t.database.query<{ revocation: unknown }>('SELECT revocation FROM app_oauth_grant_results WHERE id = $1', [removed.id]);
      expect(rows).toEqual([{ revocation: { kind: 'revoked' } }]);
      expect(shared.revocations).toEqual(['refresh_token']);
      const [scope] = await t.database.query<{ scope_kind: string }>('SELECT scope_kind FROM executions WHERE id = $1', [removed.cleanup_execution_id]);
      expect(scope).toEqual({ scope_kind: 'service' });
      // The other organization's grant is untouched: its token is live and its connection still works.
      expect(await shared.findAccessToken(heldToken)).not.toBeNull();
      await check(t, first.secret, held);
      expect((await get(first.secret, `/v1/connections/${held}`).expect(200)).body).toMatchObject({ state: 'ready' });

      const last = await remove(first.secret, held);
      expect(await ended(t, last.cleanup_execution_id!)).toBe('completed');
      expect(shared.revocations).toEqual(['refresh_token', 'refresh_token']);
    } finally {
      await server.close();
      await shared.close();
    }
  });

  it('[GRANT-03] an exchange result the source did not install (its connection was removed meanwhile) is cleaned only after the source ended, and revoked', () =>
    ownServers(async ({ as, rs }) => {
    const org = await t.createOrganization('Unused');
    const connectionId = await connect(org.secret, rs.url);
    const signIn = await authorize(org.secret, connectionId);
    let release: () => void = () => undefined;
    as.hold('/token', new Promise<void>((resolve) => (release = resolve)));
    const answer = completeByLoopback(t, org.secret, signIn.callback).then((res) => res);
    try {
      for (let i = 0; i < 200 && !as.requests.includes('/token'); i++) await new Promise((resolve) => setTimeout(resolve, 25));
      const [authorization] = await t.database.query<{ exchange_execution_id: string }>('SELECT exchange_execution_id FROM app_oauth_authorizations WHERE connection_id = $1', [connectionId]);
      // The code is at the server; the connection is removed before the answer comes back.
      await t.http().delete(`/v1/connections/${connectionId}`).set('authorization', bearer(org.secret)).expect(202);
      const revocationsBefore = as.revocations.length;
      release();
      const done = await answer;
      expect(done.status).toBe(200);
      expect((done.body as { state: string }).state).not.toBe('ready');
      expect(await ended(t, authorization!.exchange_execution_id)).toBe('completed');
      const [result] = await t.database.query<{ id: string; installed_at: string | null; cleanup_execution_id: string }>(
        `SELECT id, installed_at, cleanup_execution_id FROM app_oauth_grant_results WHERE source_execution_id = $1 AND kind = 'exchange'`,
        [authorization!.exchange_execution_id],
      );
      expect(result).toMatchObject({ installed_at: null, cleanup_execution_id: expect.any(String) });
      expect(await ended(t, result!.cleanup_execution_id)).toBe('completed');
      // The cleanup started only with the source's end: it was created after the exchange's call, and ended after the source.
      const [order] = await t.database.query<{ after: boolean }>(
        'SELECT c.ended_at >= s.ended_at AS after FROM executions c, executions s WHERE c.id = $1 AND s.id = $2',
        [result!.cleanup_execution_id, authorization!.exchange_execution_id],
      );
      expect(order).toEqual({ after: true });
      expect(as.revocations.length).toBe(revocationsBefore + 1);
    } finally {
      as.hold('/token', null);
      release();
    }
    }));

  it('end to end: a Bot’s Turn calls a tool of the OAuth-protected server, and after the resource refuses the token the call refreshes once and succeeds', async () => {
    const fake = await FakeOpenAiServer.start();
    try {
      const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
      const connectionId = await connect(chat.secret);
      as.signInAs('carol');
      await complete(await authorize(chat.secret, connectionId));
      as.signInAs('ana');
      await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', bearer(chat.secret)).send({ tools: [{ kind: 'app', connectionId }] }).expect(200);
      rs.refuseTokensSeenSoFar();
      const before = refreshes();
      fake.enqueue(toolCallReply('c1', 'whoami', ['{}']), textReply(['You are carol.']));
      const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Who am I there?');
      const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
      expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
      expect(replyText(events)).toBe('You are carol.');
      expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ name: 'whoami', isError: false, app: { connectionId } });
      // The tool's answer, as the model got it: the account the connection's own grant belongs to.
      const second = fake.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> };
      expect(second.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['carol']);
      expect(refreshes()).toBe(before + 1);
    } finally {
      await fake.close();
    }
  });

  it('[CONN-01] authorizing a connection again replaces its grant: the old pair moves to service cleanup in that transaction, which waits while the connection still holds the issuer’s client', () =>
    ownServers(async (own) => {
      const org = await t.createOrganization('Replace');
      const connectionId = await connect(org.secret, own.rs.url);
      await complete(await authorize(org.secret, connectionId));
      const [first] = await t.database.query<{ id: string; version: number; installed_call_id: string }>('SELECT id, version, installed_call_id FROM app_oauth_grants WHERE connection_id = $1', [connectionId]);
      const [generation] = await t.database.query<{ generation: number }>('SELECT generation FROM app_connections WHERE id = $1', [connectionId]);
      await complete(await authorize(org.secret, connectionId));
      const [second] = await t.database.query<{ id: string; version: number; installed_call_id: string }>('SELECT id, version, installed_call_id FROM app_oauth_grants WHERE connection_id = $1', [connectionId]);
      expect(second!.version).toBe(first!.version + 1);
      expect(second!.installed_call_id).not.toBe(first!.installed_call_id);
      expect(await t.database.query<{ generation: number }>('SELECT generation FROM app_connections WHERE id = $1', [connectionId])).toEqual([{ generation: generation!.generation + 1 }]);
      const [replaced] = await resultsOf(`grant:${first!.id}:v${first!.version}:replaced`);
      expect(replaced).toMatchObject({ kind: 'replaced', cleanup_execution_id: expect.any(String), revocation: null });
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(own.as.revocations).toEqual([]);
      // Once the connection is removed, both pairs are revoked.
      const removed = await remove(org.secret, connectionId);
      expect(await ended(t, replaced!.cleanup_execution_id!)).toBe('completed');
      expect(await ended(t, removed.cleanup_execution_id!)).toBe('completed');
      expect(own.as.revocations).toEqual(['refresh_token', 'refresh_token']);
    }));

  it('scope step-up: a 403 insufficient_scope is remembered, the connection needs authorization, and the next authorization asks for the union of scopes', () =>
    ownServers(
      async (own) => {
        const org = await t.createOrganization('StepUp');
        const connectionId = await connect(org.secret, own.rs.url);
        await complete(await authorize(org.secret, connectionId));
        own.rs.requireScopes(['tools', 'admin']);
        await check(t, org.secret, connectionId);
        expect((await get(org.secret, `/v1/connections/${connectionId}`).expect(200)).body).toMatchObject({ state: 'needs_authorization' });
        const res = await post(org.secret, `/v1/connections/${connectionId}/authorize`, { loopbackRedirect: LOOPBACK_LISTENER }).expect(200);
        const url = new URL((res.body as { authorizationUrl: string }).authorizationUrl);
        expect(url.searchParams.get('scope')!.split(' ').sort()).toEqual(['admin', 'offline_access', 'tools']);
        expect((await complete({ callback: await playBrowser(url.href), registrationId: '', secret: org.secret })).body).toMatchObject({ state: 'ready' });
        await check(t, org.secret, connectionId);
        expect((await own.as.findAccessToken(own.rs.accepted.at(-1)!))?.scope.split(' ').sort()).toEqual(['admin', 'tools']);
        expect((await get(org.secret, `/v1/connections/${connectionId}`).expect(200)).body).toMatchObject({ state: 'ready' });
        const [grant] = await t.database.query<{ step_up_scope: string | null; step_ups: number }>('SELECT step_up_scope, step_ups FROM app_oauth_grants WHERE connection_id = $1', [connectionId]);
        expect(grant).toEqual({ step_up_scope: null, step_ups: 1 });
      },
      { scopes: ['tools', 'admin'] },
    ));

  it('registration order: a client pre-registered for the issuer (OPENBOT_APP_OAUTH_CLIENTS) comes first, with its own callback; no dynamic registration is made', async () => {
    const registrationId = newId();
    const callbackUrl = `${PUBLIC_URL}/v1/oauth/${registrationId}/callback`;
    await ownServers(
      async (own) => {
        const clients = JSON.stringify([{ id: registrationId, issuer: own.as.issuer, clientId: 'openbot-pre', clientSecret: 'pre-registered-secret-0123456789' }]);
        const node = await startTestApp({ database: t.database, masterKey: t.config.masterKey, env: { OPENBOT_PUBLIC_URL: PUBLIC_URL, OPENBOT_APP_OAUTH_CLIENTS: clients } });
        try {
          const org = await node.createOrganization('PreRegistered');
          const app = (await node.http().post('/v1/apps').set('authorization', bearer(org.secret)).send({ url: own.rs.url }).expect(201)).body as { id: string };
          const connection = (await node.http().post(`/v1/apps/${app.id}/connections`).set('authorization', bearer(org.secret)).send({}).expect(201)).body as { id: string };
          const res = await node.http().post(`/v1/connections/${connection.id}/authorize`).set('authorization', bearer(org.secret)).send({ loopbackRedirect: LOOPBACK_LISTENER }).expect(200);
          const url = new URL((res.body as { authorizationUrl: string }).authorizationUrl);
          expect(url.searchParams.get('client_id')).toBe('openbot-pre');
          expect(url.searchParams.get('redirect_uri')).toBe(callbackUrl);
          expect((await complete({ callback: await playBrowser(url.href), registrationId, secret: org.secret }, node)).body).toMatchObject({ state: 'ready' });
          expect(own.as.requests.some((path) => path.startsWith('/reg'))).toBe(false);
          const rows = await t.database.query<{ method: string; client_id: string }>('SELECT method, client_id FROM app_oauth_registrations WHERE id = $1', [registrationId]);
          expect(rows).toEqual([{ method: 'pre_registered', client_id: 'openbot-pre' }]);
        } finally {
          await node.close();
        }
      },
      { clients: [{ clientId: 'openbot-pre', clientSecret: 'pre-registered-secret-0123456789', redirectUris: [callbackUrl] }] },
    );
  });

  /** A new organization's connection whose code exchange is sent but its answer dropped; `done` is the callback's answer. */
  async function lostExchange(own: { as: TestAuthorizationServer; rs: ProtectedMcpServer }, name: string) {
    const org = await t.createOrganization(name);
    const connectionId = await connect(org.secret, own.rs.url);
    const signIn = await authorize(org.secret, connectionId);
    own.as.failPath('/token', 'drop');
    const done = await complete(signIn);
    return { org, connectionId, done };
  }

  it('a lost code-exchange answer (the code may be spent) waits in outcome_unknown; the callback answers at once with that reason and the connection still needs authorization', () =>
    ownServers(async (own) => {
      const { connectionId, done } = await lostExchange(own, 'LostExchange');
      expect(done.body).toMatchObject({ connectionId, state: 'needs_authorization', reason: 'exchange_outcome_unknown' });
      const executionId = (done.body as { executionId: string }).executionId;
      expect((await t.database.query<{ state: string }>('SELECT state FROM executions WHERE id = $1', [executionId]))[0]).toEqual({ state: 'outcome_unknown' });
      // The unsafe exchange was sent once and is never sent again on its own.
      expect(own.as.requests.filter((path) => path === '/token')).toHaveLength(1);
      expect(await t.database.query('SELECT 1 FROM app_oauth_grants WHERE connection_id = $1', [connectionId])).toEqual([]);
    }));

  it('[CALL-03] an operator\'s `succeeded` decision on a code exchange left in outcome_unknown ends it completed with a failure, not a crash: no tokens were kept, so the connection still needs authorization', () =>
    ownServers(async (own) => {
      const { org, connectionId, done } = await lostExchange(own, 'DecidedExchange');
      const executionId = (done.body as { executionId: string }).executionId;
      await post(org.secret, `/v1/executions/${executionId}/decision`).send({ decision: 'succeeded' }).expect(202);
      await waitForExecutionState(t, org.secret, executionId, 'completed');
      expect(await t.app.get(Engine).result(executionId)).toMatchObject({ failure: { reason: 'decided_without_tokens' } });
      expect(own.as.requests.filter((path) => path === '/token')).toHaveLength(1);
      expect(await t.database.query('SELECT 1 FROM app_oauth_grants WHERE connection_id = $1', [connectionId])).toEqual([]);
      const connection = await get(org.secret, `/v1/connections/${connectionId}`).expect(200);
      expect(connection.body).toMatchObject({ state: 'needs_authorization' });
    }));

  it('[GRANT-01] a refresh is an execution of its own with one oauth call-log entry and its saved result; a run of its phase again after that commit reuses the result and sends nothing twice', () =>
    ownServers(async (own) => {
      const org = await t.createOrganization('RefreshCallLog');
      const connectionId = await connect(org.secret, own.rs.url);
      await complete(await authorize(org.secret, connectionId));
      await check(t, org.secret, connectionId);
      const [grant] = await t.database.query<{ id: string }>('SELECT id FROM app_oauth_grants WHERE connection_id = $1', [connectionId]);
      own.rs.refuseTokensSeenSoFar();
      const engine = t.app.get(Engine);
      let failedAfterCommit = 0;
      // The refresh call's result is committed, then its phase fails once: the engine runs the phase again.
      engine.faults.arm('call.result.committed', { kind: 'call', run: () => { failedAfterCommit += 1; throw new Error('the phase fails after the refresh result was saved'); } }, { when: (c) => c.callKey === '1:refresh' });
      try {
        await check(t, org.secret, connectionId);
      } finally {
        engine.faults.disarm('call.result.committed');
      }
      expect(failedAfterCommit).toBe(1);
      expect(own.as.tokenRequests.filter((r) => r.grantType === 'refresh_token')).toHaveLength(1);
      const refreshes = await t.database.query<{ id: string; state: string; scope_kind: string }>(
        `SELECT id, state, scope_kind FROM executions WHERE workflow = 'app.oauth.refresh' AND resource_type = 'app-oauth-grant' AND resource_id = $1`,
        [grant!.id],
      );
      expect(refreshes).toEqual([{ id: expect.any(String), state: 'completed', scope_kind: 'service' }]);
      const calls = await t.database.query<{ id: string; call_key: string; kind: string; safe: boolean; attempt: number; status: string; saved: boolean }>(
        'SELECT id, call_key, kind, safe, attempt, status, result IS NOT NULL AS saved FROM execution_calls WHERE execution_id = $1',
        [refreshes[0]!.id],
      );
      expect(calls).toEqual([{ id: expect.any(String), call_key: '1:refresh', kind: 'oauth', safe: false, attempt: 1, status: 'succeeded', saved: true }]);
      // The rotated pair was installed once, by that call's commit, and its grant result names the call.
      const results = await t.database.query<{ call_id: string; installed: boolean }>(`SELECT call_id, installed_at IS NOT NULL AS installed FROM app_oauth_grant_results WHERE kind = 'refresh' AND registration_id = (SELECT registration_id FROM app_oauth_grants WHERE id = $1)`, [grant!.id]);
      expect(results).toEqual([{ call_id: calls[0]!.id, installed: true }]);
      expect(await t.database.query('SELECT version, state, refresh_intent FROM app_oauth_grants WHERE id = $1', [grant!.id])).toEqual([{ version: 2, state: 'active', refresh_intent: null }]);
      // The check's App request went again with the rotated token, which the resource server accepted.
      expect(await own.as.findAccessToken(own.rs.accepted.at(-1)!)).not.toBeNull();
      expect((await get(org.secret, `/v1/connections/${connectionId}`).expect(200)).body).toMatchObject({ state: 'ready' });
    }));

  it('[GRANT-01] a refresh answer that arrives after its intent was given up is saved as an unused grant result with its cleanup command, and revoked once no holder is left', () =>
    ownServers(async (own) => {
      const org = await t.createOrganization('LateRefresh');
      const connectionId = await connect(org.secret, own.rs.url);
      await complete(await authorize(org.secret, connectionId));
      await check(t, org.secret, connectionId);
      const t2 = await startTestApp({ database: t.database, masterKey: t.config.masterKey, env: { OPENBOT_PUBLIC_URL: PUBLIC_URL } });
      let release: () => void = () => undefined;
      try {
        own.rs.refuseTokensSeenSoFar();
        const tokenPosts = (): number => own.as.requests.filter((path) => path === '/token').length;
        const before = tokenPosts();
        own.as.hold('/token', new Promise<void>((resolve) => (release = resolve)));
        const first = check(t, org.secret, connectionId);
        for (let i = 0; i < 400 && tokenPosts() === before; i++) await new Promise((resolve) => setTimeout(resolve, 25));
        expect(tokenPosts()).toBe(before + 1);
        // The refresh is in flight; its intent is made old, as if its node had died long ago.
        await t.database.query(`UPDATE app_oauth_grants SET refresh_intent_at = now() - interval '1 hour' WHERE connection_id = $1`, [connectionId]);
        await check(t2, org.secret, connectionId);
        expect((await get(org.secret, `/v1/connections/${connectionId}`).expect(200)).body).toMatchObject({ state: 'needs_authorization' });
        release();
        await first;
        const [late] = await t.database.query<{ installed_at: string | null; cleanup_execution_id: string | null; id: string }>(
          `SELECT r.id, r.installed_at, r.cleanup_execution_id FROM app_oauth_grant_results r JOIN app_oauth_grants g ON g.registration_id = r.registration_id WHERE g.connection_id = $1 AND r.kind = 'refresh'`,
          [connectionId],
        );
        expect(late).toMatchObject({ installed_at: null, cleanup_execution_id: expect.any(String) });
        // The connection still holds a grant of the same client: the late pair waits (GRANT-04).
        expect(own.as.revocations).toEqual([]);
        const removed = await remove(org.secret, connectionId);
        expect(await ended(t, late!.cleanup_execution_id!)).toBe('completed');
        expect(await ended(t, removed.cleanup_execution_id!)).toBe('completed');
        expect(own.as.revocations).toEqual(['refresh_token', 'refresh_token']);
      } finally {
        own.as.hold('/token', null);
        release();
        await t2.close();
      }
    }));
});

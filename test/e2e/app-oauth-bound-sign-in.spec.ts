import type { AddressInfo } from 'node:net';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fakes/mcp-protected-server';
import { expectDeclared } from '../support/api-assertions';
import { LOOPBACK_LISTENER, openBrowserSession, relayedToListener } from '../support/app-oauth-sign-in';
import { addMember, bearer } from '../support/chat-fixture';
import { startAuthorizationServer, type TestAuthorizationServer } from '../support/oauth-authorization-server';
import { TestBrowser } from '../support/oidc-provider';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * App OAuth sign-ins bound to the member who started them (issue 44, finding 1; decision 066),
 * replayed as the attack: organization B starts an authorization and forwards its link to a
 * person of organization A. Browsers are TestBrowsers with their own cookies; OpenBot listens on
 * a port (its public URL, `PUBLIC_URL`, is mapped to it), the authorization server is the
 * repository's oidc-provider fake. Also the callback's `returnTo` (finding 4).
 */
jest.setTimeout(120_000);

describe('App OAuth: sign-ins bound to the member who started them', () => {
  const PUBLIC_URL = 'http://127.0.0.1:8080';
  let t: TestApp;
  let as: TestAuthorizationServer;
  let rs: ProtectedMcpServer;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_PUBLIC_URL: PUBLIC_URL } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    as = await startAuthorizationServer();
    rs = await startProtectedMcpServer(as);
  });
  afterAll(async () => {
    await rs?.close();
    await as?.close();
    await t?.close();
  });

  /** OpenBot's public URL as this test reaches it. */
  const viaApp = (url: string): string => (url.startsWith(`${PUBLIC_URL}/`) ? `${base}${url.slice(PUBLIC_URL.length)}` : url);
  const atOpenBot = (next: URL): boolean => next.href.startsWith(`${PUBLIC_URL}/`);
  const atServer = (next: URL): boolean => next.origin === as.issuer;

  interface Member {
    readonly organizationId: string;
    readonly memberId: string;
    readonly secret: string;
    /** Their own browser, signed in to OpenBot. */
    readonly browser: TestBrowser;
    readonly csrf: string;
    readonly session: string;
  }

  async function signedIn(organizationId: string, memberId: string, secret: string): Promise<Member> {
    const { token, csrf } = await openBrowserSession(t, organizationId, memberId);
    const browser = new TestBrowser();
    browser.put(base, 'openbot_session', token);
    return { organizationId, memberId, secret, browser, csrf, session: token };
  }

  async function organization(name: string): Promise<Member> {
    const org = await t.createOrganization(name);
    return signedIn(org.organizationId, org.memberId, org.secret);
  }

  async function connection(owner: Member): Promise<string> {
    // One App per URL in an organization (409 AppExists names it): a second connection reuses it.
    const registered = await t.http().post('/v1/apps').set('authorization', bearer(owner.secret)).send({ url: rs.url });
    const app = registered.status === 409 ? { id: (registered.body as { appId: string }).appId } : (registered.body as { id: string });
    expect([201, 409]).toContain(registered.status);
    return ((await t.http().post(`/v1/apps/${app.id}/connections`).set('authorization', bearer(owner.secret)).send({}).expect(201)).body as { id: string }).id;
  }

  /** `POST /v1/connections/{id}/authorize` from the member's signed-in browser (the session cookie and its CSRF token). */
  const authorizeInBrowser = (member: Member, connectionId: string, body: Record<string, unknown> = {}) =>
    t.http().post(`/v1/connections/${connectionId}/authorize`).set('cookie', `openbot_session=${member.session}`).set('x-csrf-token', member.csrf).send(body);

  /** The browser opens OpenBot's start URL and stops where it would leave for the authorization server: answers that URL. */
  async function serverUrlFrom(member: Member, startUrl: string): Promise<string> {
    const run = await member.browser.navigate(viaApp(startUrl), atServer);
    if (run.stoppedAt === null) throw new Error(`the start URL did not lead to the authorization server: ${run.response?.status} ${await run.response?.text()}`);
    return run.stoppedAt;
  }

  /** A browser follows the authorization server's URL (signing in as `account`) up to OpenBot's callback, and opens it there. */
  async function throughServer(browser: TestBrowser, serverUrl: string, account: string): Promise<Response> {
    as.signInAs(account);
    const run = await browser.navigate(serverUrl, atOpenBot);
    if (run.stoppedAt === null) throw new Error(`the browser did not reach OpenBot's callback: ${run.response?.status}`);
    return browser.request(viaApp(run.stoppedAt));
  }

  /** A declared error answered to a browser: the status and the body's `type`. */
  async function declared(res: Response, status: number, type: string): Promise<void> {
    const body = (await res.json()) as { type?: string; message?: string };
    expect({ status: res.status, type: body.type, message: typeof body.message }).toEqual({ status, type, message: 'string' });
  }

  const connectionState = async (secret: string, connectionId: string): Promise<string> =>
    ((await t.http().get(`/v1/connections/${connectionId}`).set('authorization', bearer(secret)).expect(200)).body as { state: string }).state;
  const codeExchanges = (): number => as.tokenRequests.filter((r) => r.grantType === 'authorization_code').length;

  it('the attack of decision 066, browser flow: B’s start link forwarded to a member of A is 404 there, B’s authorization-server URL forwarded to A’s browser is refused at the callback (403), B’s connection gets no grant, and B’s own browser still completes it', async () => {
    const b = await organization('Bound B');
    const a = await organization('Bound A');
    const connectionId = await connection(b);
    const started = await authorizeInBrowser(b, connectionId).expect(200);
    expect(started.body).toMatchObject({ binding: 'browser' });
    const { authorizationUrl: startUrl, authorizationId } = started.body as { authorizationUrl: string; authorizationId: string };
    expect(startUrl).toBe(`${PUBLIC_URL}/v1/oauth/authorizations/${authorizationId}/start`);

    // The start link forwarded unopened: another organization's member, another member of B, a browser without a session, and B's API key get nowhere.
    await declared(await a.browser.request(viaApp(startUrl)), 404, 'AppAuthorizationNotFound');
    const colleague = await addMember(t, b.organizationId, 'admin');
    const colleagueBrowser = await signedIn(b.organizationId, colleague.memberId, colleague.secret);
    await declared(await colleagueBrowser.browser.request(viaApp(startUrl)), 403, 'Forbidden');
    expect((await new TestBrowser().request(viaApp(startUrl))).status).toBe(401);
    expectDeclared(await t.http().get(`/v1/oauth/authorizations/${authorizationId}/start`).set('authorization', bearer(b.secret)), 403, 'Forbidden');

    // B opens its own start link: its browser is bound (an HttpOnly, SameSite=Lax cookie on the callback's path only), then it would go to the authorization server.
    const serverUrl = await serverUrlFrom(b, startUrl);
    expect(new URL(serverUrl).searchParams.get('prompt')).toBe('consent');
    const binding = b.browser.hops.at(-1)!.setCookies.find((cookie) => cookie.startsWith('openbot_app_oauth_'));
    expect(binding).toMatch(/HttpOnly/);
    expect(binding).toMatch(/SameSite=Lax/);
    const registrationId = /\/v1\/oauth\/([0-9a-f-]{36})\/callback$/.exec(new URL(serverUrl).searchParams.get('redirect_uri')!)![1];
    expect(binding).toContain(`Path=/v1/oauth/${registrationId}/callback`);

    // B forwards the authorization server's URL instead: A's person consents in A's browser, and OpenBot's callback refuses it there.
    const before = codeExchanges();
    const refused = await throughServer(a.browser, serverUrl, 'alice');
    await declared(refused, 403, 'Forbidden');
    expect(codeExchanges()).toBe(before);
    expect(await connectionState(b.secret, connectionId)).toBe('needs_authorization');
    expect(await t.database.query('SELECT 1 FROM app_oauth_grants WHERE connection_id = $1', [connectionId])).toEqual([]);

    // The authorization stays usable in the browser that began it.
    const done = await throughServer(b.browser, serverUrl, 'bob');
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ connectionId, state: 'ready', reason: null });
    await t.http().post(`/v1/connections/${connectionId}/check`).set('authorization', bearer(b.secret)).expect(202);
    for (let i = 0; i < 200 && rs.accepted.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect((await as.findAccessToken(rs.accepted.at(-1)!))?.accountId).toBe('bob');

    // Audited: who started it and who completed it, bound how (finding 12).
    const audit = (await t.http().get('/v1/audit-events?limit=200').set('authorization', bearer(b.secret)).expect(200)).body as { data: Array<{ action: string; target: { id: string }; details: Record<string, unknown> }> };
    const entries = audit.data.filter((e) => e.target.id === connectionId && e.action.startsWith('app-connection.authorization'));
    expect(entries.map((e) => [e.action, e.details.binding]).sort()).toEqual([
      ['app-connection.authorization-completed', 'browser'],
      ['app-connection.authorization-started', 'browser'],
    ]);
  });

  it('the attack of decision 066, loopback flow: an API key must name a loopback listener; B’s authorization-server URL forwarded to A’s browser only reaches A’s own loopback, nothing is used, and only B’s member completes it', async () => {
    const b = await organization('Loopback B');
    const a = await organization('Loopback A');
    const connectionId = await connection(b);

    // A key has no browser to bind.
    const bare = await t.http().post(`/v1/connections/${connectionId}/authorize`).set('authorization', bearer(b.secret)).send({});
    expectDeclared(bare, 400, 'InvalidInput');
    expect((bare.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['loopbackRedirect']);
    for (const listener of ['http://localhost:5000/cb', 'https://127.0.0.1:5000/cb', 'http://127.0.0.1/cb', 'http://evil.example:5000/cb', 'http://127.0.0.1:5000/cb?x=1', 'http://user@127.0.0.1:5000/cb']) {
      const res = await t.http().post(`/v1/connections/${connectionId}/authorize`).set('authorization', bearer(b.secret)).send({ loopbackRedirect: listener });
      expectDeclared(res, 400, 'InvalidInput');
      expect((res.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['loopbackRedirect']);
    }

    const started = await t.http().post(`/v1/connections/${connectionId}/authorize`).set('authorization', bearer(b.secret)).send({ loopbackRedirect: LOOPBACK_LISTENER }).expect(200);
    expect(started.body).toMatchObject({ binding: 'loopback' });
    const serverUrl = (started.body as { authorizationUrl: string }).authorizationUrl;
    expect(new URL(serverUrl).searchParams.get('prompt')).toBe('consent');

    // Forwarded to A's person: their browser comes back through OpenBot's callback, which only relays it to a listener on their own machine.
    const before = codeExchanges();
    as.signInAs('alice');
    const run = await a.browser.navigate(serverUrl, atOpenBot);
    const callback = new URL(run.stoppedAt!);
    const relay = await a.browser.request(viaApp(callback.href));
    expect(relay.status).toBe(303);
    expect(relay.headers.get('location')!.startsWith(`${LOOPBACK_LISTENER}?`)).toBe(true);
    expect(codeExchanges()).toBe(before);
    expect(await t.database.query('SELECT used_at FROM app_oauth_authorizations WHERE connection_id = $1', [connectionId])).toEqual([{ used_at: null }]);
    expect(await connectionState(b.secret, connectionId)).toBe('needs_authorization');

    // What a listener received is worth nothing to anyone but B's member: A's key reads the state as unknown, B's colleague is refused.
    const received = Object.fromEntries(new URL(relay.headers.get('location')!).searchParams.entries());
    const foreign = await t.http().post('/v1/oauth/authorizations/complete').set('authorization', bearer(a.secret)).send(received);
    expectDeclared(foreign, 400, 'InvalidInput');
    expect((foreign.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['state']);
    const colleague = await addMember(t, b.organizationId, 'admin');
    expectDeclared(await t.http().post('/v1/oauth/authorizations/complete').set('authorization', bearer(colleague.secret)).send(received), 403, 'Forbidden');
    expect(codeExchanges()).toBe(before);

    // B's own listener and key complete it (here with the code B's own browser brings back).
    as.signInAs('bob');
    const own = await new TestBrowser().navigate(serverUrl, atOpenBot);
    const mine = await relayedToListener(t, `${new URL(own.stoppedAt!).pathname}${new URL(own.stoppedAt!).search}`);
    const done = await t.http().post('/v1/oauth/authorizations/complete').set('authorization', bearer(b.secret)).send(mine).expect(200);
    expect(done.body).toMatchObject({ connectionId, state: 'ready', reason: null });
    expectDeclared(await t.http().post('/v1/oauth/authorizations/complete').set('authorization', bearer(b.secret)).send(mine), 400, 'InvalidInput');
  });

  it('returnTo follows SSO’s safe-return rules: `/.//evil.example/x` stays a path of this server in the callback’s redirect, and the other ways out are 400 on returnTo', async () => {
    const b = await organization('Return');
    for (const returnTo of ['//evil.example/x', '/\\evil.example/x', 'https://evil.example/x', 'evil.example/x', '/\t/evil.example/x', '/x\\y']) {
      const res = await authorizeInBrowser(b, await connection(b), { returnTo });
      expectDeclared(res, 400, 'InvalidInput');
      expect((res.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['returnTo']);
    }
    for (const [returnTo, path] of [
      ['/.//evil.example/x', '/.//evil.example/x'],
      ['/settings/apps?tab=oauth', '/settings/apps'],
    ] as const) {
      const connectionId = await connection(b);
      const started = (await authorizeInBrowser(b, connectionId, { returnTo }).expect(200)).body as { authorizationUrl: string };
      const answer = await throughServer(b.browser, await serverUrlFrom(b, started.authorizationUrl), 'bob');
      expect(answer.status).toBe(303);
      const location = answer.headers.get('location')!;
      // Exactly the validated path, with the outcome added; a browser resolves it on this server.
      expect(location.startsWith(`${path}?`)).toBe(true);
      const resolved = new URL(location, `${PUBLIC_URL}/v1/oauth/x/callback`);
      expect(resolved.origin).toBe(PUBLIC_URL);
      expect(resolved.searchParams.get('connectionId')).toBe(connectionId);
      expect(resolved.searchParams.get('state')).toBe('ready');
      if (returnTo.includes('tab=')) expect(resolved.searchParams.get('tab')).toBe('oauth');
    }
  });

  it('App connections are audited: creation (what it points at, never a value), deletion, and each authorization’s start and completion (finding 12)', async () => {
    const b = await organization('Audited');
    const connectionId = await connection(b);
    const signIn = await t.http().post(`/v1/connections/${connectionId}/authorize`).set('authorization', bearer(b.secret)).send({ loopbackRedirect: LOOPBACK_LISTENER }).expect(200);
    as.signInAs('bob');
    const run = await new TestBrowser().navigate((signIn.body as { authorizationUrl: string }).authorizationUrl, atOpenBot);
    const received = await relayedToListener(t, `${new URL(run.stoppedAt!).pathname}${new URL(run.stoppedAt!).search}`);
    await t.http().post('/v1/oauth/authorizations/complete').set('authorization', bearer(b.secret)).send(received).expect(200);
    await t.http().delete(`/v1/connections/${connectionId}`).set('authorization', bearer(b.secret)).expect(202);
    const audit = (await t.http().get('/v1/audit-events?limit=200').set('authorization', bearer(b.secret)).expect(200)).body as {
      data: Array<{ action: string; actor: { kind: string; id: string | null }; target: { type: string; id: string }; details: Record<string, unknown> }>;
    };
    const entries = audit.data.filter((e) => e.target.id === connectionId);
    expect(entries.map((e) => e.action)).toEqual(['app-connection.created', 'app-connection.authorization-started', 'app-connection.authorization-completed', 'app-connection.deleted']);
    expect(entries.every((e) => e.actor.kind === 'member' && e.actor.id === b.memberId && e.target.type === 'app-connection')).toBe(true);
    expect(entries[0]!.details).toEqual({ appId: expect.any(String), owner: 'organization', remote: rs.url, headers: [], variables: [] });
    expect(entries[1]!.details).toMatchObject({ binding: 'loopback' });
    expect(entries[2]!.details).toMatchObject({ binding: 'loopback', error: null });
    // No state, code or token in any of them.
    expect(JSON.stringify(entries)).not.toContain(received.code!);
    expect(JSON.stringify(entries)).not.toContain(received.state!);
  });
});

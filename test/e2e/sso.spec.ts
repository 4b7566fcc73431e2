import { Controller, Get, Module, Post } from '@nestjs/common';
import { ROLE_PERMISSIONS, type MemberCaller, type SealedRecordId } from '@openbot/domain';
import { SealedRecords } from '@openbot/platform';
import { createRemoteJWKSet, exportJWK, generateKeyPair, SignJWT, type JWTVerifyGetKey } from 'jose';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import type { Response as SupertestResponse } from 'supertest';
import { Access, CurrentMember, Requires } from '../../libs/api/src/auth/access.decorator';
import { IdTokenRejected, verifyIdToken } from '../../libs/features/src/sso/id-token-verifier';
import { codeChallengeOf } from '../../libs/features/src/sso/session-tokens';
import { startOidcProvider, TestBrowser, type TestAccount, type TestIdentityProvider } from '../support/oidc-provider';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Enterprise single sign-on (OpenID Connect) against a real OpenID provider (oidc-provider on
 * loopback), driven like a browser: redirects followed one by one, cookies kept per host. The app
 * listens on a real port so the provider can send the browser back to its public URL.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SESSION_COOKIE = 'openbot_session';
const LOGIN_COOKIE = 'openbot_sso_login';

const ALICE: TestAccount = { sub: 'alice-0001', email: 'alice@example.com', email_verified: true, name: 'Alice Example' };
const BOB: TestAccount = { sub: 'bob-0002', email: 'Bob@EXAMPLE.com', email_verified: true, name: 'Bob Example' };
const MALLORY: TestAccount = { sub: 'mallory-0003', email: 'mallory@elsewhere.org', email_verified: true, name: 'Mallory' };
const CAROL: TestAccount = { sub: 'carol-0004', email: 'carol@example.com', email_verified: false, name: 'Carol Unverified' };
const DAVE: TestAccount = { sub: 'dave-0005', email: 'dave@example.com', email_verified: true, name: 'Dave Removed' };

/** A probe route that fails like a bug would, reachable by API keys and sessions alike (ERR-02). */
@Controller('probe-sso')
@Access('member')
class FaultProbeController {
  @Get('fault')
  @Requires('organization.read')
  fault(@CurrentMember() caller: MemberCaller): never {
    throw new Error(`private fault text for ${caller.memberId}`);
  }

  @Post('echo')
  @Requires('organization.read')
  echo(@CurrentMember() caller: MemberCaller): { memberId: string; sessionId: string | null } {
    return { memberId: caller.memberId, sessionId: caller.sessionId ?? null };
  }
}

@Module({ controllers: [FaultProbeController] })
class FaultProbeModule {}

/** The whole body of a request (a hostile provider reading the token requests sent to it). */
async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function expectDeclared(res: { status: number; body: unknown }, status: number, type: string): void {
  expect({ status: res.status, type: (res.body as { type?: unknown }).type }).toEqual({ status, type });
  const keys = type === 'InvalidInput' ? ['issues', 'message', 'type'] : ['message', 'type'];
  expect(Object.keys(res.body as object).sort()).toEqual(keys);
}

describe('single sign-on (OpenID Connect) and session cookies', () => {
  let t: TestApp;
  let idp: TestIdentityProvider;
  let appBase: string;
  let owner: Awaited<ReturnType<TestApp['createOrganization']>>;
  const bearer = (secret: string): string => `Bearer ${secret}`;
  /** An organization's own callback (its redirect URI), and a `navigate` stop just before the browser reaches it. */
  const callbackOf = (organizationId: string): string => `${appBase}/v1/sso/${organizationId}/callback`;
  const atCallback =
    (organizationId = owner.organizationId) =>
    (next: URL): boolean =>
      next.href.startsWith(`${callbackOf(organizationId)}?`);

  /** The body of a fetch Response, parsed. */
  const json = async (response: Response): Promise<{ status: number; body: unknown; headers: Headers }> => ({
    status: response.status,
    body: (await response.json()) as unknown,
    headers: response.headers,
  });

  async function configure(body: Record<string, unknown> = {}, secret = owner.secret): Promise<SupertestResponse> {
    return t
      .http()
      .put('/v1/sso')
      .set('authorization', bearer(secret))
      .send({ issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, allowedDomains: ['example.com'], defaultRole: 'member', ...body });
  }

  /** A full browser sign-in; returns the browser (holding the session cookie) and the callback's answer. */
  async function signIn(account: string, organizationId = owner.organizationId, returnTo = '/v1/me') {
    idp.signInAs(account);
    const browser = new TestBrowser();
    const start = `${appBase}/v1/sso/${organizationId}/login?returnTo=${encodeURIComponent(returnTo)}`;
    // Stop before following the app's final redirect: the test looks at it.
    const run = await browser.navigate(start, (next) => next.origin === appBase && !next.pathname.startsWith('/v1/sso/'));
    const callbackHop = browser.hops.find((hop) => hop.url.startsWith(`${callbackOf(organizationId)}?`));
    return { browser, run, callbackHop, callbackUrl: callbackHop?.url };
  }

  async function me(browser: TestBrowser): Promise<{ status: number; body: unknown; headers: Headers }> {
    return json(await browser.request(`${appBase}/v1/me`));
  }

  beforeAll(async () => {
    const port = await freePort();
    appBase = `http://127.0.0.1:${port}`;
    t = await startTestApp({ env: { OPENBOT_PUBLIC_URL: appBase }, imports: [FaultProbeModule] });
    await t.app.listen({ port, host: '127.0.0.1' });
    owner = await t.createOrganization('SSO Inc');
    idp = await startOidcProvider({ redirectUris: [callbackOf(owner.organizationId)], accounts: [ALICE, BOB, MALLORY, CAROL, DAVE] });
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  describe('configuration (PUT/GET/DELETE /v1/sso)', () => {
    it('GET before any configuration is 404 SsoNotConfigured; so is a login', async () => {
      const other = await t.createOrganization('No SSO');
      expectDeclared(await t.http().get('/v1/sso').set('authorization', bearer(other.secret)), 404, 'SsoNotConfigured');
      expectDeclared(await t.http().get(`/v1/sso/${other.organizationId}/login`), 404, 'SsoNotConfigured');
      expectDeclared(await t.http().get('/v1/sso/not-a-uuid/login'), 404, 'SsoNotConfigured');
      expectDeclared(await t.http().delete('/v1/sso').set('authorization', bearer(other.secret)), 404, 'SsoNotConfigured');
    });

    it('[SEC-01] PUT answers the configuration without its secret, which is stored only sealed; GET reads it back', async () => {
      const res = await configure();
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        organizationId: owner.organizationId,
        issuer: idp.issuer,
        clientId: idp.clientId,
        allowedDomains: ['example.com'],
        defaultRole: 'member',
        revision: expect.any(Number),
        redirectUri: callbackOf(owner.organizationId),
        loginUrl: `${appBase}/v1/sso/${owner.organizationId}/login`,
        updatedAt: expect.any(String),
      });
      expect(res.text).not.toContain(idp.clientSecret);
      const read = await t.http().get('/v1/sso').set('authorization', bearer(owner.secret)).expect(200);
      expect(read.body).toEqual(res.body);
      const [row] = await t.database.query<{ recordId: string; purpose: string }>(
        `SELECT c.client_secret_record_id AS "recordId", s.purpose FROM sso_configurations c JOIN sealed_records s ON s.id = c.client_secret_record_id WHERE c.organization_id = $1`,
        [owner.organizationId],
      );
      expect(row?.purpose).toBe('sso.client-secret');
      expect(await t.app.get(SealedRecords).get(row!.recordId as SealedRecordId)).toEqual({ purpose: 'sso.client-secret', value: idp.clientSecret });
      const [clear] = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM sso_configurations c WHERE strpos(c::text, $1) > 0`, [idp.clientSecret]);
      expect(clear!.n).toBe(0);
    });

    it('every change raises the revision, replaces the sealed secret and is audited', async () => {
      const first = (await configure()).body as { revision: number };
      const sealedBefore = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM sealed_records WHERE purpose = 'sso.client-secret'`);
      const second = await configure({ allowedDomains: ['Example.com', 'example.com'] });
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({ revision: first.revision + 1, allowedDomains: ['example.com'] });
      const sealedAfter = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM sealed_records WHERE purpose = 'sso.client-secret'`);
      expect(sealedAfter[0]!.n).toBe(sealedBefore[0]!.n);
      const audit = await t.database.query<{ action: string; details: { revision: number } }>(
        `SELECT action, details FROM audit_events WHERE organization_id = $1 AND action = 'sso.configured' ORDER BY id DESC LIMIT 1`,
        [owner.organizationId],
      );
      expect(audit[0]).toEqual({ action: 'sso.configured', details: expect.objectContaining({ revision: first.revision + 1, issuer: idp.issuer }) });
      expect(JSON.stringify(audit)).not.toContain(idp.clientSecret);
    });

    it.each([
      ['a private address', 'http://10.0.0.5/realms/x'],
      ['the cloud metadata address', 'http://169.254.169.254/'],
      ['another loopback address', 'http://127.0.0.2:8080'],
      ['a query', `http://127.0.0.1:1/?tenant=x`],
      ['credentials', 'http://user:pass@127.0.0.1:1/'],
      ['no URL', 'acme'],
    ])('an issuer with %s is refused with 400 on issuer', async (_label, issuer) => {
      const res = await configure({ issuer });
      expectDeclared(res, 400, 'InvalidInput');
      expect((res.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['issuer']);
    });

    it.each([
      ['no clientSecret', { clientSecret: undefined }, 'clientSecret'],
      ['an empty allowedDomains', { allowedDomains: [] }, 'allowedDomains'],
      ['a wildcard domain', { allowedDomains: ['*.example.com'] }, 'allowedDomains'],
      ['owner as default role', { defaultRole: 'owner' }, 'defaultRole'],
      ['an unknown field', { tenant: 'x' }, 'tenant'],
    ])('[ERR-02] %s is 400 InvalidInput naming the field', async (_label, body, path) => {
      const res = await configure(body);
      expectDeclared(res, 400, 'InvalidInput');
      expect((res.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toContain(path);
    });
  });

  describe('sign-in', () => {
    beforeAll(async () => {
      expect((await configure()).status).toBe(200);
    });

    it('the login redirects to the provider: code flow, openid email profile, state, nonce, PKCE S256, and a login cookie', async () => {
      const res = await t.http().get(`/v1/sso/${owner.organizationId}/login?returnTo=/v1/bots`).expect(302);
      const location = new URL(res.headers.location as string);
      expect(location.origin).toBe(idp.issuer);
      const query = Object.fromEntries(location.searchParams);
      expect(query).toMatchObject({
        response_type: 'code',
        client_id: idp.clientId,
        redirect_uri: callbackOf(owner.organizationId),
        scope: 'openid email profile',
        code_challenge_method: 'S256',
      });
      expect(query.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(query.nonce!.length).toBeGreaterThanOrEqual(20);
      // The stored login keeps the verifier of this challenge, the nonce, and only a hash of the state.
      const [login] = await t.database.query<{ codeVerifier: string; nonce: string; returnTo: string }>(
        `SELECT code_verifier AS "codeVerifier", nonce, return_to AS "returnTo" FROM sso_logins WHERE state_hash = sha256(convert_to($1, 'UTF8'))`,
        [query.state],
      );
      expect(login).toEqual({ codeVerifier: expect.any(String), nonce: query.nonce, returnTo: '/v1/bots' });
      expect(codeChallengeOf(login!.codeVerifier)).toBe(query.code_challenge);
      const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
      const loginCookie = cookies.find((c) => c.startsWith(`${LOGIN_COOKIE}=`));
      expect(loginCookie).toMatch(/HttpOnly/);
      expect(loginCookie).toMatch(/SameSite=Lax/);
      expect(loginCookie).toContain(`Path=/v1/sso/${owner.organizationId}/callback`);
      expect(loginCookie).not.toMatch(/Secure/);
    });

    it('[IDN-09] a browser signs in at the provider, gets a session cookie, and /v1/me shows the just-in-time member', async () => {
      const { browser, run, callbackHop } = await signIn(ALICE.sub);
      expect(callbackHop?.status).toBe(302);
      expect(run.stoppedAt).toBe(`${appBase}/v1/me`);
      const sessionCookie = callbackHop!.setCookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`));
      expect(sessionCookie).toMatch(/HttpOnly/);
      expect(sessionCookie).toMatch(/SameSite=Lax/);
      expect(sessionCookie).toMatch(/Path=\//);
      expect(sessionCookie).not.toMatch(/Secure/);
      const answer = await me(browser);
      expect(answer.status).toBe(200);
      const body = answer.body as { organization: { id: string }; member: { id: string; role: string }; apiKey: unknown };
      expect(body.organization.id).toBe(owner.organizationId);
      expect(body.member).toMatchObject({ id: expect.stringMatching(UUID), role: 'member' });
      expect(body.member.id).not.toBe(owner.memberId);
      expect(body.apiKey).toBeNull();
      const [member] = await t.database.query<{ role: string; name: string; email: string }>('SELECT role, name, email FROM members WHERE id = $1', [body.member.id]);
      expect(member).toEqual({ role: 'member', name: ALICE.name, email: ALICE.email });
      const identities = await t.database.query('SELECT issuer, subject, member_id AS "memberId", email FROM member_identities WHERE organization_id = $1 AND subject = $2', [
        owner.organizationId,
        ALICE.sub,
      ]);
      expect(identities).toEqual([{ issuer: idp.issuer, subject: ALICE.sub, memberId: body.member.id, email: ALICE.email }]);
      const [audit] = await t.database.query<{ actorKind: string; details: { provisioned: boolean } }>(
        `SELECT actor_kind AS "actorKind", details FROM audit_events WHERE organization_id = $1 AND action = 'sso.login' AND target_id = $2`,
        [owner.organizationId, body.member.id],
      );
      expect(audit).toEqual({ actorKind: 'sso', details: expect.objectContaining({ provisioned: true, issuer: idp.issuer, subject: ALICE.sub }) });
      // The token in the cookie is not what the database keeps.
      const token = browser.cookie(`${appBase}/v1/me`, SESSION_COOKIE)!;
      const [stored] = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM sessions s WHERE strpos(s::text, $1) > 0`, [token]);
      expect(stored!.n).toBe(0);
    });

    it('a second sign-in finds the same member (by issuer and subject) and opens another session', async () => {
      const first = await me((await signIn(ALICE.sub)).browser);
      const second = await me((await signIn(ALICE.sub)).browser);
      expect((second.body as { member: { id: string } }).member.id).toBe((first.body as { member: { id: string } }).member.id);
      const [count] = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM member_identities WHERE subject = $1`, [ALICE.sub]);
      expect(count!.n).toBe(1);
    });

    it('the email claims come from the userinfo endpoint when the ID token leaves them out (for its own subject only)', async () => {
      const before = idp.requests.length;
      await signIn(BOB.sub);
      expect(idp.requests.slice(before).some((path) => path.startsWith('/me'))).toBe(true);
    });

    it('email domains compare case-insensitively', async () => {
      const { browser } = await signIn(BOB.sub);
      const answer = await me(browser);
      expect(answer.status).toBe(200);
    });

    it('returnTo may only name a path of this server; anything else returns to /v1/me', async () => {
      for (const [returnTo, landing] of [
        ['/v1/bots?limit=5', '/v1/bots?limit=5'],
        ['//evil.example/steal', '/v1/me'],
        ['/\\evil.example', '/v1/me'],
        ['https://evil.example/', '/v1/me'],
        ['v1/bots', '/v1/me'],
      ] as const) {
        const { run } = await signIn(ALICE.sub, owner.organizationId, returnTo);
        expect({ returnTo, landedAt: run.stoppedAt }).toEqual({ returnTo, landedAt: `${appBase}${landing}` });
      }
    });

    it('a domain not in allowedDomains is refused with 403 Forbidden and no member is created', async () => {
      const [before] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM members WHERE organization_id = $1', [owner.organizationId]);
      idp.signInAs(MALLORY.sub);
      const browser = new TestBrowser();
      const { stoppedAt } = await browser.navigate(`${appBase}/v1/sso/${owner.organizationId}/login`, atCallback());
      const answer = await browser.request(stoppedAt!);
      expect(answer.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false);
      const refused = await json(answer);
      expectDeclared(refused, 403, 'Forbidden');
      expect((refused.body as { message: string }).message).toContain('elsewhere.org');
      expect(browser.cookie(`${appBase}/v1/me`, SESSION_COOKIE)).toBeUndefined();
      const [after] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM members WHERE organization_id = $1', [owner.organizationId]);
      expect(after!.n).toBe(before!.n);
    });

    it('an email the provider has not verified is refused with 403 Forbidden', async () => {
      idp.signInAs(CAROL.sub);
      const browser = new TestBrowser();
      const { stoppedAt } = await browser.navigate(`${appBase}/v1/sso/${owner.organizationId}/login`, atCallback());
      const answer = await json(await browser.request(stoppedAt!));
      expectDeclared(answer, 403, 'Forbidden');
      expect((answer.body as { message: string }).message).toMatch(/not verified/);
    });

    it('a replayed callback (same state and code) is refused with 400: a login is single use', async () => {
      const { browser, callbackUrl } = await signIn(ALICE.sub);
      const replay = await json(await browser.request(callbackUrl!));
      expectDeclared(replay, 400, 'InvalidInput');
      expect((replay.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['state']);
    });

    it('security: a leaked callback opened in another browser is refused with 403 (login CSRF) and cannot burn the login of the browser that started it', async () => {
      idp.signInAs(ALICE.sub);
      const starter = new TestBrowser();
      const other = new TestBrowser();
      const { stoppedAt } = await starter.navigate(`${appBase}/v1/sso/${owner.organizationId}/login`, atCallback());
      // Without any login cookie, and with the cookie of a login of its own at the same organization.
      expectDeclared(await json(await other.request(stoppedAt!)), 403, 'Forbidden');
      await other.navigate(`${appBase}/v1/sso/${owner.organizationId}/login`, atCallback());
      expect(other.cookie(stoppedAt!, LOGIN_COOKIE)).toEqual(expect.any(String));
      expectDeclared(await json(await other.request(stoppedAt!)), 403, 'Forbidden');
      expect(other.cookie(`${appBase}/v1/me`, SESSION_COOKIE)).toBeUndefined();
      // The login is still there for its own browser.
      const done = await starter.request(stoppedAt!);
      expect(done.status).toBe(302);
      expect((await me(starter)).status).toBe(200);
    });

    it('security: the retired shared callback /v1/sso/callback only answers 404 SsoCallbackMoved: no code is exchanged there and no login used up', async () => {
      idp.signInAs(ALICE.sub);
      const browser = new TestBrowser();
      const { stoppedAt } = await browser.navigate(`${appBase}/v1/sso/${owner.organizationId}/login`, atCallback());
      const before = idp.requests.length;
      const retired = await json(await browser.request(`${appBase}/v1/sso/callback${new URL(stoppedAt!).search}`));
      expectDeclared(retired, 404, 'SsoCallbackMoved');
      expect((retired.body as { message: string }).message).toContain('/v1/sso/{organizationId}/callback');
      expect(idp.requests.slice(before)).toEqual([]);
      expect((await browser.request(stoppedAt!)).status).toBe(302);
    });

    it('a forged authorization code is refused by the provider: 401 Unauthenticated, and no session', async () => {
      idp.signInAs(ALICE.sub);
      const browser = new TestBrowser();
      const { stoppedAt } = await browser.navigate(`${appBase}/v1/sso/${owner.organizationId}/login`, atCallback());
      const forged = new URL(stoppedAt!);
      forged.searchParams.set('code', randomBytes(32).toString('base64url'));
      const answer = await json(await browser.request(forged.href));
      expectDeclared(answer, 401, 'Unauthenticated');
      expect(browser.cookie(`${appBase}/v1/me`, SESSION_COOKIE)).toBeUndefined();
    });

    it('a login older than 10 minutes is refused with 400', async () => {
      idp.signInAs(ALICE.sub);
      const browser = new TestBrowser();
      const { stoppedAt } = await browser.navigate(`${appBase}/v1/sso/${owner.organizationId}/login`, atCallback());
      const state = new URL(stoppedAt!).searchParams.get('state')!;
      await t.database.query(`UPDATE sso_logins SET created_at = now() - interval '11 minutes' WHERE state_hash = sha256(convert_to($1, 'UTF8'))`, [state]);
      expectDeclared(await json(await browser.request(stoppedAt!)), 400, 'InvalidInput');
    });

    it('an unknown or malformed state is 400 InvalidInput on state', async () => {
      for (const state of [randomBytes(32).toString('base64url'), 'short', '']) {
        const res = await t.http().get(`/v1/sso/${owner.organizationId}/callback?code=abc&state=${state}`);
        expectDeclared(res, 400, 'InvalidInput');
        expect((res.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['state']);
      }
    });

    it('a provider that does not sign the user in (access_denied) is 401 Unauthenticated', async () => {
      idp.signInAs('deny');
      const browser = new TestBrowser();
      const { stoppedAt } = await browser.navigate(`${appBase}/v1/sso/${owner.organizationId}/login`, atCallback());
      expect(new URL(stoppedAt!).searchParams.get('error')).toBe('access_denied');
      const refused = await json(await browser.request(stoppedAt!));
      expectDeclared(refused, 401, 'Unauthenticated');
      expect((refused.body as { message: string }).message).toMatch(/did not sign you in/);
    });

    it('a configuration change during a login refuses its callback', async () => {
      idp.signInAs(ALICE.sub);
      const browser = new TestBrowser();
      const { stoppedAt } = await browser.navigate(`${appBase}/v1/sso/${owner.organizationId}/login`, atCallback());
      expect((await configure()).status).toBe(200);
      expectDeclared(await json(await browser.request(stoppedAt!)), 400, 'InvalidInput');
      expect(browser.cookie(`${appBase}/v1/me`, SESSION_COOKIE)).toBeUndefined();
    });

    it('an unreachable provider is 503 RequestFailed unavailable, with its error ID', async () => {
      const other = await t.createOrganization('Unreachable IdP');
      const closed = `http://127.0.0.1:${await freePort()}`;
      expect((await configure({ issuer: closed }, other.secret)).status).toBe(200);
      const res = await t.http().get(`/v1/sso/${other.organizationId}/login`);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ type: 'RequestFailed', category: 'unavailable', errorId: expect.stringMatching(UUID) });
      expect(res.headers['openbot-error-id']).toBe((res.body as { errorId: string }).errorId);
    });
  });

  describe('sessions', () => {
    let alice: TestBrowser;

    beforeAll(async () => {
      expect((await configure()).status).toBe(200);
      alice = (await signIn(ALICE.sub)).browser;
    });

    async function csrfOf(browser: TestBrowser): Promise<{ csrfToken: string; memberId: string; expiresAt: string }> {
      const answer = await json(await browser.request(`${appBase}/v1/sso/session`));
      expect(answer.status).toBe(200);
      return answer.body as { csrfToken: string; memberId: string; expiresAt: string };
    }

    it('GET /v1/sso/session shows the session with its CSRF token; it ends 8 hours after sign-in', async () => {
      const answer = await json(await alice.request(`${appBase}/v1/sso/session`));
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        memberId: expect.stringMatching(UUID),
        organizationId: owner.organizationId,
        role: 'member',
        csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        expiresAt: expect.any(String),
      });
      const hours = (Date.parse((answer.body as { expiresAt: string }).expiresAt) - Date.now()) / 3_600_000;
      expect(hours).toBeGreaterThan(7.9);
      expect(hours).toBeLessThanOrEqual(8);
      // The CSRF token is kept by no cache (decision 069).
      expect({ cacheControl: answer.headers.get('cache-control'), nosniff: answer.headers.get('x-content-type-options') }).toEqual({ cacheControl: 'no-store', nosniff: 'nosniff' });
    });

    it('GET /v1/sso/session with an API key is 404 SessionNotFound: there is no session to show', async () => {
      expectDeclared(await t.http().get('/v1/sso/session').set('authorization', bearer(owner.secret)), 404, 'SessionNotFound');
    });

    it('[IDN-09] an unsafe request with the cookie but without the CSRF token is 403 with the standard body; with it, it reaches the same use case as a key', async () => {
      const { csrfToken, memberId } = await csrfOf(alice);
      const missing = await json(await alice.request(`${appBase}/probe-sso/echo`, { method: 'POST' }));
      expectDeclared(missing, 403, 'Forbidden');
      const wrong = await json(await alice.request(`${appBase}/probe-sso/echo`, { method: 'POST', headers: { 'x-csrf-token': `${csrfToken.slice(1)}x` } }));
      expectDeclared(wrong, 403, 'Forbidden');
      const right = await json(await alice.request(`${appBase}/probe-sso/echo`, { method: 'POST', headers: { 'x-csrf-token': csrfToken } }));
      expect(right.status).toBe(201);
      expect(right.body).toEqual({ memberId, sessionId: expect.stringMatching(UUID) });
      const keyed = await t.http().post('/probe-sso/echo').set('authorization', bearer(owner.secret)).expect(201);
      expect(keyed.body).toEqual({ memberId: owner.memberId, sessionId: null });
    });

    it('[ERR-02] a server fault on a cookie request answers the same RequestFailed as on an API key', async () => {
      const byCookie = await json(await alice.request(`${appBase}/probe-sso/fault`));
      const byKey = await t.http().get('/probe-sso/fault').set('authorization', bearer(owner.secret));
      for (const answer of [byCookie, { status: byKey.status, body: byKey.body as unknown, headers: new Headers(byKey.headers as Record<string, string>) }]) {
        expect(answer.status).toBe(500);
        expect(answer.body).toEqual({ type: 'RequestFailed', category: 'internal', errorId: expect.stringMatching(UUID) });
        expect(answer.headers.get('openbot-error-id')).toBe((answer.body as { errorId: string }).errorId);
        expect(JSON.stringify(answer.body)).not.toContain('private fault text');
      }
      expect(t.logs.join('\n')).not.toContain('private fault text');
    });

    it('[ERR-02] an unknown, tampered or expired session cookie is 401 Unauthenticated with the standard body', async () => {
      const token = alice.cookie(`${appBase}/v1/me`, SESSION_COOKIE)!;
      const tampered = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
      for (const cookie of [`${SESSION_COOKIE}=${randomBytes(32).toString('base64url')}`, `${SESSION_COOKIE}=${tampered}`, `${SESSION_COOKIE}=x`]) {
        const res = await t.http().get('/v1/me').set('cookie', cookie);
        expectDeclared(res, 401, 'Unauthenticated');
      }
      const bob = (await signIn(BOB.sub)).browser;
      const bobToken = bob.cookie(`${appBase}/v1/me`, SESSION_COOKIE)!;
      expect((await me(bob)).status).toBe(200);
      await t.database.query(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE token_hash = sha256(convert_to($1, 'UTF8'))`, [bobToken]);
      expectDeclared(await me(bob), 401, 'Unauthenticated');
    });

    it('[FW-09] an SSO member is an ordinary member: its role’s permissions apply to its session (a member may not manage SSO)', async () => {
      expect((await me(alice)).status).toBe(200);
      expectDeclared(await json(await alice.request(`${appBase}/v1/sso`)), 403, 'Forbidden');
      const members = await t.database.query<{ role: string }>('SELECT role FROM members WHERE organization_id = $1 AND email = $2', [owner.organizationId, ALICE.email]);
      expect(members).toEqual([{ role: 'member' }]);
    });

    it('[IDN-06] removing the member ends its sessions at once, and it cannot sign in again', async () => {
      const dave = (await signIn(DAVE.sub)).browser;
      const answer = await me(dave);
      expect(answer.status).toBe(200);
      const memberId = (answer.body as { member: { id: string } }).member.id;
      await t.database.query('UPDATE members SET removed_at = now() WHERE id = $1', [memberId]);
      expectDeclared(await me(dave), 401, 'Unauthenticated');
      const again = await signIn(DAVE.sub);
      expect(again.callbackHop?.status).toBe(403);
    });

    it('[IDN-09] POST /v1/sso/logout needs the CSRF token, then revokes the session and clears the cookie; the cookie then answers 401', async () => {
      const { browser } = await signIn(ALICE.sub);
      const token = browser.cookie(`${appBase}/v1/me`, SESSION_COOKIE)!;
      const { csrfToken } = await csrfOf(browser);
      expectDeclared(await json(await browser.request(`${appBase}/v1/sso/logout`, { method: 'POST' })), 403, 'Forbidden');
      expect((await me(browser)).status).toBe(200);
      const out = await browser.request(`${appBase}/v1/sso/logout`, { method: 'POST', headers: { 'x-csrf-token': csrfToken } });
      expect(out.status).toBe(204);
      const cleared = out.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
      expect(cleared).toMatch(/Max-Age=0|Expires=Thu, 01 Jan 1970/);
      expect(browser.cookie(`${appBase}/v1/me`, SESSION_COOKIE)).toBeUndefined();
      const replayed = await t.http().get('/v1/me').set('cookie', `${SESSION_COOKIE}=${token}`);
      expectDeclared(replayed, 401, 'Unauthenticated');
      const [session] = await t.database.query<{ revoked: boolean; id: string }>(
        `SELECT revoked_at IS NOT NULL AS revoked, id FROM sessions WHERE token_hash = sha256(convert_to($1, 'UTF8'))`,
        [token],
      );
      expect(session?.revoked).toBe(true);
      const audit = await t.database.query(`SELECT action FROM audit_events WHERE action = 'session.revoked' AND target_id = $1`, [session!.id]);
      expect(audit).toEqual([{ action: 'session.revoked' }]);
    });

    it('POST /v1/sso/logout without the session cookie is 401: API keys are revoked, not signed out', async () => {
      expectDeclared(await t.http().post('/v1/sso/logout').set('authorization', bearer(owner.secret)), 401, 'Unauthenticated');
      expectDeclared(await t.http().post('/v1/sso/logout'), 401, 'Unauthenticated');
    });
  });

  describe('security: the OIDC mix-up (one organization’s provider relaying another organization’s sign-in)', () => {
    // Organization A's provider is honest; organization B's admin controls B's provider (and it does not advertise RFC 9207's iss).
    let victimIdp: TestIdentityProvider;
    let attackerIdp: TestIdentityProvider;
    let orgA: Awaited<ReturnType<TestApp['createOrganization']>>;
    let orgB: Awaited<ReturnType<TestApp['createOrganization']>>;
    let redirectA: string;
    let redirectB: string;
    const tokenRequests = (...providers: TestIdentityProvider[]): number => providers.reduce((n, p) => n + p.requests.filter((path) => path.startsWith('/token')).length, 0);

    beforeAll(async () => {
      orgA = await t.createOrganization('Victim Org');
      orgB = await t.createOrganization('Attacker Org');
      victimIdp = await startOidcProvider({ accounts: [ALICE] });
      attackerIdp = await startOidcProvider({ accounts: [MALLORY], advertiseIssParameter: false });
      const a = await configure({ issuer: victimIdp.issuer, clientId: victimIdp.clientId, clientSecret: victimIdp.clientSecret }, orgA.secret);
      const b = await configure(
        { issuer: attackerIdp.issuer, clientId: attackerIdp.clientId, clientSecret: attackerIdp.clientSecret, allowedDomains: ['elsewhere.org'] },
        orgB.secret,
      );
      // Each provider registers the redirect URI the server tells its organization to register.
      redirectA = (a.body as { redirectUri: string }).redirectUri;
      redirectB = (b.body as { redirectUri: string }).redirectUri;
      victimIdp.registerRedirectUri(redirectA);
      attackerIdp.registerRedirectUri(redirectB);
    });
    afterEach(() => {
      attackerIdp.intercept(null);
    });
    afterAll(async () => {
      await victimIdp?.close();
      await attackerIdp?.close();
    });

    it('security: the attacker who relays a victim through its own provider gets no session (two providers, the attack end to end)', async () => {
      victimIdp.signInAs(ALICE.sub);
      // 1. In its own browser, the attacker starts a sign-in at the victim's organization and keeps A's authorization request.
      const attacker = new TestBrowser();
      const authorizationA = new URL((await attacker.request(`${appBase}/v1/sso/${orgA.organizationId}/login`)).headers.get('location')!);
      const stateA = authorizationA.searchParams.get('state')!;
      // 2. B's provider sends whoever arrives on to A's provider with A's client, nonce and PKCE challenge but B's state, and keeps every code sent to its token endpoint.
      const stolenCodes: string[] = [];
      attackerIdp.intercept(async (req, res) => {
        const url = new URL(req.url ?? '/', attackerIdp.issuer);
        if (url.pathname === '/auth') {
          const relayed = new URL(authorizationA);
          relayed.searchParams.set('state', url.searchParams.get('state') ?? '');
          res.writeHead(302, { location: relayed.href }).end();
          return true;
        }
        if (url.pathname === '/token') {
          stolenCodes.push(new URLSearchParams(await bodyOf(req)).get('code') ?? '');
          res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant' }));
          return true;
        }
        return false;
      });
      // 3. A member of A opens B's sign-in link; A's provider signs them in and sends them back with A's code.
      const victim = new TestBrowser();
      await victim.navigate(`${appBase}/v1/sso/${orgB.organizationId}/login`, (next) => next.origin === appBase && !next.pathname.startsWith('/v1/sso/'));
      expect(victim.hops.some((hop) => hop.url.startsWith(victimIdp.issuer))).toBe(true);
      expect(victim.cookie(`${appBase}/v1/me`, SESSION_COOKIE)).toBeUndefined();
      // 4. The attacker replays every code B's token endpoint received against A's state, in the browser holding A's login cookie.
      for (const code of stolenCodes) {
        const replay = new URL(redirectA);
        replay.search = new URLSearchParams({ code, state: stateA, iss: victimIdp.issuer }).toString();
        await attacker.request(replay.href);
      }
      expect(attacker.cookie(`${appBase}/v1/me`, SESSION_COOKIE)).toBeUndefined();
      expect(stolenCodes).toEqual([]);
      // A's provider sent the victim to A's own callback, which refused B's state.
      expect(victim.hops.find((hop) => hop.url.startsWith(`${redirectA}?`))?.status).toBe(400);
      const members = await t.database.query('SELECT id FROM members WHERE organization_id = $1 AND email = $2', [orgA.organizationId, ALICE.email]);
      expect(members).toEqual([]);
    });

    it('security: each organization has its own redirect URI: PUT /v1/sso answers it, the login sends it and scopes its cookie to it', async () => {
      expect(redirectA).toBe(callbackOf(orgA.organizationId));
      expect(redirectB).toBe(callbackOf(orgB.organizationId));
      for (const [organizationId, redirectUri] of [
        [orgA.organizationId, redirectA],
        [orgB.organizationId, redirectB],
      ] as const) {
        const res = await t.http().get(`/v1/sso/${organizationId}/login`).expect(302);
        expect(new URL(res.headers.location as string).searchParams.get('redirect_uri')).toBe(redirectUri);
        const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith(`${LOGIN_COOKIE}=`));
        expect(cookie).toContain(`Path=${new URL(redirectUri).pathname};`);
      }
    });

    it('security: a state begun for another organization is refused at this organization’s callback (400 on state) before any token request, and stays usable', async () => {
      attackerIdp.signInAs(MALLORY.sub);
      const browser = new TestBrowser();
      const { stoppedAt } = await browser.navigate(`${appBase}/v1/sso/${orgB.organizationId}/login`, atCallback(orgB.organizationId));
      const binding = browser.cookie(stoppedAt!, LOGIN_COOKIE)!;
      // B's answer delivered to A's callback, B's login cookie sent along (as if it were not scoped to B's callback).
      const elsewhere = new URL(stoppedAt!);
      elsewhere.pathname = new URL(redirectA).pathname;
      const before = tokenRequests(victimIdp, attackerIdp);
      const refused = await json(await browser.request(elsewhere.href, { headers: { cookie: `${LOGIN_COOKIE}=${binding}` } }));
      expectDeclared(refused, 400, 'InvalidInput');
      expect((refused.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['state']);
      expect(tokenRequests(victimIdp, attackerIdp)).toBe(before);
      expect((await browser.request(stoppedAt!)).status).toBe(302);
      expect((await me(browser)).status).toBe(200);
    });

    it('security: [RFC 9207] a callback whose iss is not the organization’s issuer is refused with 401 before its code is exchanged', async () => {
      victimIdp.signInAs(ALICE.sub);
      const browser = new TestBrowser();
      const { stoppedAt } = await browser.navigate(`${appBase}/v1/sso/${orgA.organizationId}/login`, atCallback(orgA.organizationId));
      const callback = new URL(stoppedAt!);
      expect(callback.searchParams.get('iss')).toBe(victimIdp.issuer);
      callback.searchParams.set('iss', attackerIdp.issuer);
      const before = tokenRequests(victimIdp);
      expectDeclared(await json(await browser.request(callback.href)), 401, 'Unauthenticated');
      expect(tokenRequests(victimIdp)).toBe(before);
      expect(browser.cookie(`${appBase}/v1/me`, SESSION_COOKIE)).toBeUndefined();
    });

    it('security: [RFC 9207] a provider advertising authorization_response_iss_parameter_supported must send iss: a callback without it is refused with 401', async () => {
      const discovery = (await (await fetch(`${victimIdp.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      expect(discovery.authorization_response_iss_parameter_supported).toBe(true);
      victimIdp.signInAs(ALICE.sub);
      const browser = new TestBrowser();
      const { stoppedAt } = await browser.navigate(`${appBase}/v1/sso/${orgA.organizationId}/login`, atCallback(orgA.organizationId));
      const callback = new URL(stoppedAt!);
      callback.searchParams.delete('iss');
      const before = tokenRequests(victimIdp);
      expectDeclared(await json(await browser.request(callback.href)), 401, 'Unauthenticated');
      expect(tokenRequests(victimIdp)).toBe(before);
    });

    it('security: [RFC 9207] iss is checked whenever it is sent, also from a provider that does not advertise it (which may leave it out)', async () => {
      const discovery = (await (await fetch(`${attackerIdp.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      expect(discovery).not.toHaveProperty('authorization_response_iss_parameter_supported');
      attackerIdp.signInAs(MALLORY.sub);
      const wrong = new TestBrowser();
      const first = new URL((await wrong.navigate(`${appBase}/v1/sso/${orgB.organizationId}/login`, atCallback(orgB.organizationId))).stoppedAt!);
      first.searchParams.set('iss', victimIdp.issuer);
      const before = tokenRequests(attackerIdp);
      expectDeclared(await json(await wrong.request(first.href)), 401, 'Unauthenticated');
      expect(tokenRequests(attackerIdp)).toBe(before);
      const without = new TestBrowser();
      const second = new URL((await without.navigate(`${appBase}/v1/sso/${orgB.organizationId}/login`, atCallback(orgB.organizationId))).stoppedAt!);
      second.searchParams.delete('iss');
      expect((await without.request(second.href)).status).toBe(302);
      expect((await me(without)).status).toBe(200);
    });
  });

  describe('[FW-09] one relying party per organization', () => {
    let second: TestIdentityProvider;

    beforeAll(async () => {
      second = await startOidcProvider({ accounts: [ALICE], claimsInIdToken: true, pkceRequired: false });
    });
    afterAll(async () => {
      await second?.close();
    });

    it('another organization with its own provider signs the same person in as its own member, with its default role', async () => {
      const other = await t.createOrganization('Second IdP Inc');
      second.registerRedirectUri(callbackOf(other.organizationId));
      const res = await t
        .http()
        .put('/v1/sso')
        .set('authorization', bearer(other.secret))
        .send({ issuer: second.issuer, clientId: second.clientId, clientSecret: second.clientSecret, allowedDomains: ['example.com'], defaultRole: 'viewer' });
      expect(res.status).toBe(200);
      const before = second.requests.length;
      second.signInAs(ALICE.sub);
      const browser = new TestBrowser();
      const run = await browser.navigate(`${appBase}/v1/sso/${other.organizationId}/login`, (next) => next.origin === appBase && !next.pathname.startsWith('/v1/sso/'));
      expect(run.stoppedAt).toBe(`${appBase}/v1/me`);
      // The claims were in the ID token: no userinfo request.
      expect(second.requests.slice(before).some((path) => path.startsWith('/me'))).toBe(false);
      const answer = await me(browser);
      const body = answer.body as { organization: { id: string }; member: { id: string; role: string } };
      expect(body.organization.id).toBe(other.organizationId);
      expect(body.member.role).toBe('viewer');
      const inFirst = await t.database.query<{ memberId: string }>('SELECT member_id AS "memberId" FROM member_identities WHERE organization_id = $1 AND subject = $2', [
        owner.organizationId,
        ALICE.sub,
      ]);
      expect(inFirst.map((r) => r.memberId)).not.toContain(body.member.id);
      // A viewer's session cannot change the configuration either (and needs no CSRF token to be refused for that).
      expectDeclared(await json(await browser.request(`${appBase}/v1/sso`)), 403, 'Forbidden');
    });

    it('DELETE /v1/sso turns sign-in off (204): the login is 404 and the secret is gone; a new configuration gets a higher revision', async () => {
      const other = await t.createOrganization('Deleting Inc');
      const put = (await configure({ issuer: second.issuer, clientId: second.clientId, clientSecret: second.clientSecret }, other.secret)).body as { revision: number };
      const [{ recordId }] = (await t.database.query<{ recordId: string }>('SELECT client_secret_record_id AS "recordId" FROM sso_configurations WHERE organization_id = $1', [
        other.organizationId,
      ])) as [{ recordId: string }];
      const deleted = await t.http().delete('/v1/sso').set('authorization', bearer(other.secret));
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      expectDeclared(await t.http().get('/v1/sso').set('authorization', bearer(other.secret)), 404, 'SsoNotConfigured');
      expectDeclared(await t.http().get(`/v1/sso/${other.organizationId}/login`), 404, 'SsoNotConfigured');
      expect(await t.database.query('SELECT id FROM sealed_records WHERE id = $1', [recordId])).toEqual([]);
      const again = (await configure({ issuer: second.issuer, clientId: second.clientId, clientSecret: second.clientSecret }, other.secret)).body as { revision: number };
      expect(again.revision).toBe(put.revision + 2);
      const audit = await t.database.query<{ action: string }>(`SELECT action FROM audit_events WHERE organization_id = $1 AND action LIKE 'sso.%' ORDER BY id`, [other.organizationId]);
      // Turning SSO on grants its default role again (from none): audited each time as a role grant.
      expect(audit.map((a) => a.action)).toEqual(['sso.configured', 'sso.default-role-changed', 'sso.deleted', 'sso.configured', 'sso.default-role-changed']);
    });
  });

  describe('[IDN-02] security: the default role is a role grant (a key scoped to sso.manage alone mints no admin)', () => {
    // The attacker holds a key of the victim organization scoped to `sso.manage` only, and runs an OpenID provider of its own.
    let victim: Awaited<ReturnType<TestApp['createOrganization']>>;
    let attackerIdp: TestIdentityProvider;
    const TRENT: TestAccount = { sub: 'trent-0006', email: 'trent@elsewhere.org', email_verified: true, name: 'Trent' };
    const attackerConfiguration = (): Record<string, unknown> => ({
      issuer: attackerIdp.issuer,
      clientId: attackerIdp.clientId,
      clientSecret: attackerIdp.clientSecret,
      allowedDomains: ['elsewhere.org'],
      defaultRole: 'admin',
    });
    const keyWith = async (scopes: string[]): Promise<string> =>
      ((await t.http().post('/v1/api-keys').set('authorization', bearer(victim.secret)).send({ name: 'narrow key', scopes }).expect(201)).body as { secret: string }).secret;
    const membersOf = async (account: TestAccount): Promise<Array<{ role: string }>> =>
      t.database.query<{ role: string }>('SELECT role FROM members WHERE organization_id = $1 AND email = $2', [victim.organizationId, account.email]);
    /** The attacker's own browser signs in at the victim organization through whatever provider its SSO names. */
    const attackerSignsIn = async (account: TestAccount): Promise<{ landedAt: string | null; browser: TestBrowser }> => {
      attackerIdp.signInAs(account.sub);
      const browser = new TestBrowser();
      const run = await browser.navigate(`${appBase}/v1/sso/${victim.organizationId}/login`, (next) => next.origin === appBase && !next.pathname.startsWith('/v1/sso/'));
      return { landedAt: run.stoppedAt, browser };
    };

    beforeAll(async () => {
      victim = await t.createOrganization('Victim of a narrow key');
      attackerIdp = await startOidcProvider({ redirectUris: [callbackOf(victim.organizationId)], accounts: [MALLORY, TRENT] });
    });
    afterAll(async () => {
      await attackerIdp?.close();
    });

    it('[IDN-02] PUT /v1/sso with defaultRole admin by a key scoped to sso.manage alone is 403 naming what it lacks, and the attacker’s first sign-in makes no admin', async () => {
      const ssoOnly = await keyWith(['sso.manage']);
      const refused = await configure(attackerConfiguration(), ssoOnly);
      expectDeclared(refused, 403, 'Forbidden');
      const message = (refused.body as { message: string }).message;
      expect(message).toContain('"members.manage"');
      expect(message).toContain('"billing.manage"');
      expect(message).toContain('API key');
      // Nothing was configured (no outbound request to the issuer either), so the sign-in the attack relied on has nowhere to go.
      expect(attackerIdp.requests).toEqual([]);
      expectDeclared(await t.http().get('/v1/sso').set('authorization', bearer(victim.secret)), 404, 'SsoNotConfigured');
      const { browser } = await attackerSignsIn(MALLORY);
      expect(browser.hops.map((hop) => hop.status)).toEqual([404]);
      expect(browser.cookie(`${appBase}/v1/me`, SESSION_COOKIE)).toBeUndefined();
      expect(await membersOf(MALLORY)).toEqual([]);
      // No role is below the grant rule: even `viewer` needs members.manage and the viewer's permissions.
      expectDeclared(await configure({ ...attackerConfiguration(), defaultRole: 'viewer' }, ssoOnly), 403, 'Forbidden');
      expect(await t.database.query('SELECT 1 FROM audit_events WHERE organization_id = $1 AND action LIKE $2', [victim.organizationId, 'sso.%'])).toEqual([]);
    });

    it('[IDN-02] a key with sso.manage, members.manage and a member’s rights may set defaultRole member but not admin', async () => {
      const memberGranter = await keyWith(['sso.manage', 'members.manage', ...ROLE_PERMISSIONS.member]);
      const refused = await configure(attackerConfiguration(), memberGranter);
      expectDeclared(refused, 403, 'Forbidden');
      // Exactly the admin's permissions the key lacks are named.
      const lacking = ROLE_PERMISSIONS.admin.filter((p) => p !== 'sso.manage' && p !== 'members.manage' && !ROLE_PERMISSIONS.member.includes(p));
      expect((refused.body as { message: string }).message).toContain(`lacks ${lacking.map((p) => `"${p}"`).join(', ')}.`);
      const allowed = await configure({ ...attackerConfiguration(), defaultRole: 'member' }, memberGranter);
      expect(allowed.status).toBe(200);
      expect(allowed.body).toMatchObject({ issuer: attackerIdp.issuer, defaultRole: 'member' });
      const { landedAt, browser } = await attackerSignsIn(TRENT);
      expect(landedAt).toBe(`${appBase}/v1/me`);
      expect(((await me(browser)).body as { member: { role: string } }).member.role).toBe('member');
      expect(await membersOf(TRENT)).toEqual([{ role: 'member' }]);
    });

    it('[IDN-02] the owner’s key may make admin the default role: the first sign-in is then an admin, and the audit log shows the grant', async () => {
      const granted = await configure(attackerConfiguration(), victim.secret);
      expect(granted.status).toBe(200);
      expect(granted.body).toMatchObject({ defaultRole: 'admin' });
      const { landedAt, browser } = await attackerSignsIn(MALLORY);
      expect(landedAt).toBe(`${appBase}/v1/me`);
      expect(((await me(browser)).body as { member: { role: string } }).member.role).toBe('admin');
      expect(await membersOf(MALLORY)).toEqual([{ role: 'admin' }]);
      const audit = (await t.http().get('/v1/audit-events?limit=200').set('authorization', bearer(victim.secret)).expect(200)).body as {
        data: Array<{ action: string; actor: { kind: string; id: string | null }; target: { type: string; id: string }; details: Record<string, unknown> }>;
      };
      const grants = audit.data.filter((event) => event.action === 'sso.default-role-changed');
      expect(grants).toEqual([
        expect.objectContaining({ target: { type: 'sso-configuration', id: victim.organizationId }, details: expect.objectContaining({ from: null, to: 'member', issuer: attackerIdp.issuer }) }),
        {
          id: expect.stringMatching(UUID),
          actor: { kind: 'member', id: victim.memberId },
          action: 'sso.default-role-changed',
          target: { type: 'sso-configuration', id: victim.organizationId },
          details: { from: 'member', to: 'admin', issuer: attackerIdp.issuer, revision: (granted.body as { revision: number }).revision },
          createdAt: expect.any(String),
        },
      ]);
      // A change that keeps the role is no new grant.
      expect((await configure({ ...attackerConfiguration(), allowedDomains: ['elsewhere.org', 'example.com'] }, victim.secret)).status).toBe(200);
      const after = (await t.http().get('/v1/audit-events?limit=200').set('authorization', bearer(victim.secret)).expect(200)).body as { data: Array<{ action: string }> };
      expect(after.data.filter((event) => event.action === 'sso.default-role-changed')).toHaveLength(2);
    });
  });

  describe('[PLAT-01] OpenAPI', () => {
    interface Operation {
      responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }>; headers?: Record<string, unknown> }>;
    }
    let doc: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, { properties?: Record<string, unknown> }> } };

    beforeAll(async () => {
      doc = (await t.http().get('/openapi.json').expect(200)).body as typeof doc;
    });

    const documented = (path: string, method: string, status: string): string[] => {
      const ref = doc.paths[path]![method]!.responses[status]!.content!['application/json']!.schema.$ref!;
      return Object.keys(doc.components.schemas[ref.replace('#/components/schemas/', '')]!.properties ?? {}).sort();
    };

    it('documents every SSO route: bodies match their schemas, redirects their Location, deletions no body', async () => {
      const put = await configure();
      expect(Object.keys(put.body as object).sort()).toEqual(documented('/v1/sso', 'put', '200'));
      const get = await t.http().get('/v1/sso').set('authorization', bearer(owner.secret)).expect(200);
      expect(Object.keys(get.body as object).sort()).toEqual(documented('/v1/sso', 'get', '200'));
      const { browser } = await signIn(ALICE.sub);
      const session = await json(await browser.request(`${appBase}/v1/sso/session`));
      expect(Object.keys(session.body as object).sort()).toEqual(documented('/v1/sso/session', 'get', '200'));
      for (const path of ['/v1/sso/{organizationId}/login', '/v1/sso/{organizationId}/callback']) {
        expect(Object.keys(doc.paths[path]!.get!.responses['302']!.headers ?? {})).toEqual(expect.arrayContaining(['Location', 'Set-Cookie']));
      }
      // The per-organization callback takes RFC 9207's iss; the retired shared one is documented as a deprecated 404 only.
      const callback = doc.paths['/v1/sso/{organizationId}/callback']!.get as unknown as { parameters: Array<{ name: string; in: string }> };
      expect(callback.parameters.map((p) => `${p.in}:${p.name}`)).toEqual(expect.arrayContaining(['path:organizationId', 'query:state', 'query:iss']));
      const retired = doc.paths['/v1/sso/callback']!.get as unknown as { deprecated?: boolean; responses: Record<string, unknown> };
      const statuses = Object.keys(retired.responses);
      expect({ deprecated: retired.deprecated, answers: statuses.filter((status) => Number(status) < 500) }).toEqual({ deprecated: true, answers: ['404'] });
      expect(doc.paths['/v1/sso']!.delete!.responses['204']!.content).toBeUndefined();
      expect(doc.paths['/v1/sso/logout']!.post!.responses['204']!.content).toBeUndefined();
    });
  });

  describe('ID token verification (against the real provider’s JWKS)', () => {
    let keys: JWTVerifyGetKey;
    const nonce = 'nonce-of-this-login-0123456789';

    beforeAll(() => {
      keys = createRemoteJWKSet(new URL(`${idp.issuer}/jwks`));
    });

    function token(claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ sub: 'subject-1', email: 'x@example.com', email_verified: true, nonce, iat: now, exp: now + 300, aud: idp.clientId, iss: idp.issuer, ...claims }).setProtectedHeader({
        alg: 'RS256',
        kid: idp.signingKey.kid,
        ...header,
      });
    }
    const expected = () => ({ issuer: idp.issuer, clientId: idp.clientId, nonce });

    it('accepts a token the provider signed for this client and login', async () => {
      const signed = await token().sign(idp.signingKey.privateKey);
      await expect(verifyIdToken(signed, expected(), keys)).resolves.toEqual({ subject: 'subject-1', email: 'x@example.com', emailVerified: true, name: null });
    });

    it('refuses a token signed with a key the provider does not have (same kid)', async () => {
      const { privateKey } = await generateKeyPair('RS256');
      await expect(verifyIdToken(await token().sign(privateKey), expected(), keys)).rejects.toBeInstanceOf(IdTokenRejected);
    });

    // Claims are built when the test runs: the provider (and its client ID) exists only then.
    it.each([
      ['another audience', (): Record<string, unknown> => ({ aud: 'someone-else' })],
      ['several audiences without azp', (): Record<string, unknown> => ({ aud: [idp.clientId, 'someone-else'] })],
      ['an expiry in the past', (): Record<string, unknown> => ({ exp: Math.floor(Date.now() / 1000) - 600, iat: Math.floor(Date.now() / 1000) - 1200 })],
      ['another nonce', (): Record<string, unknown> => ({ nonce: 'nonce-of-another-login' })],
      ['no nonce', (): Record<string, unknown> => ({ nonce: undefined })],
      ['another issuer', (): Record<string, unknown> => ({ iss: 'http://127.0.0.1:1' })],
    ])('refuses a provider-signed token with %s', async (_label, claims) => {
      const signed = await token(claims()).sign(idp.signingKey.privateKey);
      await expect(verifyIdToken(signed, expected(), keys)).rejects.toBeInstanceOf(IdTokenRejected);
    });

    it('refuses unsigned and client-secret (HS256) tokens', async () => {
      const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 's', nonce, aud: idp.clientId, iss: idp.issuer, exp: 9999999999, iat: 1 })).toString('base64url')}.`;
      await expect(verifyIdToken(unsigned, expected(), keys)).rejects.toBeInstanceOf(IdTokenRejected);
      const hs = await new SignJWT({ sub: 's', nonce, iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 300 })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(idp.issuer)
        .setAudience(idp.clientId)
        .sign(new TextEncoder().encode(idp.clientSecret));
      await expect(verifyIdToken(hs, expected(), keys)).rejects.toBeInstanceOf(IdTokenRejected);
    });

    it('its public JWKS is what the provider publishes (the key under test is the provider’s own)', async () => {
      const published = (await (await fetch(`${idp.issuer}/jwks`)).json()) as { keys: Array<{ kid: string; n: string }> };
      const own = await exportJWK(idp.signingKey.privateKey);
      expect(published.keys.find((k) => k.kid === idp.signingKey.kid)?.n).toBe(own.n);
    });
  });
});

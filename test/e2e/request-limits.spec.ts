import { newId } from '@openbot/domain';
import type { Response } from 'supertest';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Per-client-address limits that hold across nodes (docs/decisions/017): failed authentications
 * (also per API key ID, decision 073) and SSO login starts, counted in PostgreSQL by two apps on
 * one database. Both trust the loopback proxy, so each test is its own client through
 * `X-Forwarded-For`.
 */

type Org = Awaited<ReturnType<TestApp['createOrganization']>>;

function expectRateLimited(res: Response, window: number): void {
  expect({ status: res.status, type: (res.body as { type?: string }).type }).toEqual({ status: 429, type: 'RateLimited' });
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= window).toBe(true);
}

const WINDOW = 3_600;
const LIMITS = { OPENBOT_AUTH_FAILURE_LIMIT: '3', OPENBOT_SSO_LOGIN_LIMIT: '2', OPENBOT_RATE_LIMIT_WINDOW_SECONDS: String(WINDOW) };

describe('per-address limits across two nodes', () => {
  let a: TestApp;
  let b: TestApp;
  let acme: Org;

  beforeAll(async () => {
    a = await startTestApp({ env: { ...LIMITS, OPENBOT_TRUSTED_PROXIES: '127.0.0.1', OPENBOT_NODE_ID: 'limits-a' } });
    b = await startTestApp({ database: a.database, masterKey: a.config.masterKey, env: { ...LIMITS, OPENBOT_TRUSTED_PROXIES: 'loopback', OPENBOT_NODE_ID: 'limits-b' } });
    acme = await a.createOrganization('Limits');
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  const me = (t: TestApp, from: string, secret: string): Promise<Response> =>
    t.http().get('/v1/me').set('x-forwarded-for', from).set('authorization', `Bearer ${secret}`).then((r) => r);

  it('security: failed authentications are limited per client address on all nodes together; a valid key from that address still gets in', async () => {
    const from = '203.0.113.10';
    const bad = 'obk_not-a-real-key';
    expect((await me(a, from, bad)).status).toBe(401);
    expect((await me(a, from, bad)).status).toBe(401);
    expect((await me(b, from, bad)).status).toBe(401);
    // The fourth failure, on either node, is over the limit of 3.
    expectRateLimited(await me(b, from, bad), WINDOW);
    expectRateLimited(await me(a, from, bad), WINDOW);
    // The address counter never refuses a valid credential (decision 073): clients behind one proxy share the address.
    expect((await me(a, from, acme.secret)).status).toBe(200);
    expect((await me(b, from, acme.secret)).status).toBe(200);
    // A forged session cookie is a failure like any other.
    expectRateLimited(await b.http().get('/v1/me').set('x-forwarded-for', from).set('cookie', 'openbot_session=forged'), WINDOW);

    // Another address is unaffected.
    expect((await me(a, '203.0.113.11', bad)).status).toBe(401);
    expect((await me(b, '203.0.113.11', acme.secret)).status).toBe(200);
    // Counted: the 3 failures and the one node A refused after counting (node B, which knew the address was over, refused without writing).
    const rows = await a.database.query<{ bucket: string; hits: number }>(`SELECT bucket, hits FROM rate_limit_windows WHERE bucket LIKE 'auth-failure:203.0.113.1_' ORDER BY bucket`);
    expect(rows).toEqual([
      { bucket: 'auth-failure:203.0.113.10', hits: 4 },
      { bucket: 'auth-failure:203.0.113.11', hits: 1 },
    ]);
  });

  it('security: guesses at one API key are limited per key ID, from any number of addresses; the key holder is never locked out, other keys are unaffected', async () => {
    const victim = await a.createOrganization('Limits key victim');
    const other = await a.createOrganization('Limits key other');
    // The attacker knows the key ID (the public part of the secret) and guesses the random part, from a fresh address each time.
    const guess = victim.secret.replace(/_[A-Za-z0-9_-]{43}$/, `_${'A'.repeat(43)}`);
    expect(guess).not.toBe(victim.secret);
    expect((await me(a, '198.18.0.1', guess)).status).toBe(401);
    expect((await me(b, '198.18.0.2', guess)).status).toBe(401);
    expect((await me(a, '198.18.0.3', guess)).status).toBe(401);
    expectRateLimited(await me(b, '198.18.0.4', guess), WINDOW);
    // Past the limit every further guess at that key answers 429, on both nodes, from any address.
    expectRateLimited(await me(a, '198.18.0.5', guess), WINDOW);
    // The key's holder still gets in: knowing a key's ID is no way to lock its holder out.
    expect((await me(b, '198.18.0.6', victim.secret)).status).toBe(200);
    expect((await me(a, '198.18.0.7', victim.secret)).status).toBe(200);
    // Another key, even from an address the guesses came from, is unaffected.
    expect((await me(a, '198.18.0.1', other.secret)).status).toBe(200);
    const rows = await a.database.query<{ hits: number }>(`SELECT hits FROM rate_limit_windows WHERE bucket = $1`, [`auth-failure-key:${victim.apiKeyId}`]);
    expect(rows).toEqual([{ hits: 5 }]);
  });

  it('security: successful authentications are not counted', async () => {
    const from = '203.0.113.20';
    for (let i = 0; i < 5; i++) expect((await me(i % 2 === 0 ? a : b, from, acme.secret)).status).toBe(200);
    expect((await me(a, from, 'obk_wrong')).status).toBe(401);
  });

  it('security: an IPv6 client is limited by its /64 network, not per address', async () => {
    const bad = 'obk_not-a-real-key';
    for (const suffix of ['1', '2', 'abcd:1']) expect((await me(a, `2001:db8:5:6::${suffix}`, bad)).status).toBe(401);
    expectRateLimited(await me(b, '2001:db8:5:6:ffff::9', bad), WINDOW);
    expect((await me(b, '2001:db8:5:7::1', bad)).status).toBe(401);
  });

  it('security: starting SSO logins is limited per client address on all nodes together', async () => {
    const login = (t: TestApp, from: string): Promise<Response> =>
      t.http().get(`/v1/sso/${newId()}/login`).set('x-forwarded-for', from).then((r) => r);
    const from = '203.0.113.30';
    // No SSO is configured: the counted requests answer 404, the one over the limit 429.
    expect((await login(a, from)).status).toBe(404);
    expect((await login(b, from)).status).toBe(404);
    expectRateLimited(await login(a, from), WINDOW);
    expectRateLimited(await login(b, from), WINDOW);
    expect((await login(b, '203.0.113.31')).status).toBe(404);
  });

  it('security: the OpenAPI document declares 429 RateLimited with Retry-After on the limited routes', async () => {
    const doc = (await a.http().get('/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string; headers?: Record<string, unknown> }> }>>;
    };
    const cases: Array<[string, string, RegExp]> = [
      ['/v1/sso/{organizationId}/login', 'get', /sign-ins/],
      ['/v1/executions/{id}/events', 'get', /open event streams/],
      ['/v1/me', 'get', /failed authentications/],
      ['/v1/organizations', 'post', /failed authentications/],
    ];
    for (const [path, method, why] of cases) {
      const limited = doc.paths[path]?.[method]?.responses['429'];
      expect({ path, description: limited?.description, header: limited?.headers?.['Retry-After'] }).toEqual({
        path,
        description: expect.stringMatching(why),
        header: expect.objectContaining({ schema: expect.objectContaining({ type: 'integer' }) }),
      });
    }
  });
});

describe('without a trusted proxy', () => {
  let t: TestApp;
  let acme: Org;

  beforeAll(async () => {
    t = await startTestApp({ env: LIMITS });
    acme = await t.createOrganization('Behind one proxy');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('security: X-Forwarded-For is ignored, so a client cannot dodge the limit by naming other addresses', async () => {
    for (let i = 1; i <= 3; i++) {
      const res = await t.http().get('/v1/me').set('x-forwarded-for', `198.51.100.${i}`).set('authorization', 'Bearer obk_nope');
      expect(res.status).toBe(401);
    }
    expectRateLimited(await t.http().get('/v1/me').set('x-forwarded-for', '198.51.100.99').set('authorization', 'Bearer obk_nope'), WINDOW);
    const rows = await t.database.query<{ bucket: string }>(`SELECT bucket FROM rate_limit_windows`);
    expect(rows.map((r) => r.bucket)).toEqual(['auth-failure:127.0.0.1']);
  });

  it('security: every client shares the proxy\'s address; 40 bad requests from it lock nobody with a valid key out', async () => {
    for (let i = 0; i < 40; i++) {
      const res = await t.http().get('/v1/me').set('authorization', `Bearer obk_attempt-${i}`);
      expect([401, 429]).toContain(res.status);
    }
    expectRateLimited(await t.http().get('/v1/me').set('authorization', 'Bearer obk_one-more'), WINDOW);
    const res = await t.http().get('/v1/me').set('authorization', `Bearer ${acme.secret}`);
    expect(res.status).toBe(200);
  });
});

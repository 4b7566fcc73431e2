import { bearer } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The headers every answer carries (decision 069), set once at the HTTP layer: `nosniff`,
 * `no-store` unless the route sets its own cache policy, and `frame-ancestors 'none'`. The CSRF
 * token's answer is checked in sso.spec.ts (it needs a signed-in browser); the API explorer in
 * Chromium in api-explorer.spec.ts, and event streams in executions-events.spec.ts.
 */
describe('security headers on every answer', () => {
  let t: TestApp;
  let org: Awaited<ReturnType<TestApp['createOrganization']>>;

  beforeAll(async () => {
    t = await startTestApp();
    org = await t.createOrganization('Headers');
  });
  afterAll(async () => {
    await t?.close();
  });

  const securityHeadersOf = (res: { headers: Record<string, string | string[] | undefined> }) => ({
    cacheControl: res.headers['cache-control'],
    nosniff: res.headers['x-content-type-options'],
    csp: res.headers['content-security-policy'],
  });
  const EVERY_ANSWER = { cacheControl: 'no-store', nosniff: 'nosniff', csp: "frame-ancestors 'none'" };

  it('a new API key’s answer (its secret) may not be stored by a browser or proxy, nor sniffed, nor framed', async () => {
    const res = await t.http().post('/v1/api-keys').set('authorization', bearer(org.secret)).send({ name: 'cached?' }).expect(201);
    expect((res.body as { secret: string }).secret).toMatch(/^obk_/);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(securityHeadersOf(res)).toEqual(EVERY_ANSWER);
    // The organization's creation answers its owner's first key the same way.
    const created = await t.http().post('/v1/organizations').set('authorization', bearer(t.adminToken)).send({ name: 'Second' }).expect(201);
    expect(securityHeadersOf(created)).toEqual(EVERY_ANSWER);
  });

  it('error answers carry them too: a refused credential, a validation error, an unknown route and a malformed URL', async () => {
    const answers = [
      await t.http().get('/v1/me').set('authorization', 'Bearer obk_not-a-key'),
      await t.http().post('/v1/api-keys').set('authorization', bearer(org.secret)).send({ name: '' }),
      await t.http().get('/v1/no-such-route').set('authorization', bearer(org.secret)),
      await t.http().get('/v1/%E0%A4%A'),
    ];
    expect(answers.map((res) => ({ status: res.status, json: /^application\/json/.test(res.headers['content-type'] ?? ''), ...securityHeadersOf(res) }))).toEqual(
      [401, 400, 404, 400].map((status) => ({ status, json: true, ...EVERY_ANSWER })),
    );
  });

  it('the API explorer at /docs may not be framed by another origin; its static files keep their own cache policy', async () => {
    const page = await t.http().get('/docs').redirects(2).expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(securityHeadersOf(page)).toEqual(EVERY_ANSWER);
    const script = await t.http().get('/docs/swagger-ui-bundle.js').expect(200);
    expect(script.headers['content-type']).toMatch(/javascript/);
    expect(securityHeadersOf(script)).toEqual({ ...EVERY_ANSWER, cacheControl: 'public, max-age=0' });
    expect(securityHeadersOf(await t.http().get('/openapi.json').expect(200))).toEqual(EVERY_ANSWER);
  });

  it('a route’s own cache policy stands: a file’s bytes revalidate by their etag', async () => {
    const uploaded = await t
      .http()
      .post('/v1/files')
      .set('authorization', bearer(org.secret))
      .attach('file', Buffer.from('hello'), { filename: 'h.txt', contentType: 'text/plain' })
      .expect(201);
    const content = await t.http().get(`/v1/files/${(uploaded.body as { id: string }).id}/content`).set('authorization', bearer(org.secret)).expect(200);
    expect(securityHeadersOf(content)).toEqual({ ...EVERY_ANSWER, cacheControl: 'private, no-cache' });
  });
});

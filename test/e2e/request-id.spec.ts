import { startTestApp, type TestApp } from '../support/test-app';

describe('request IDs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers with an x-request-id and logs the request under the same ID', async () => {
    const res = await t.http().get('/healthz').expect(200);
    const id = res.headers['x-request-id'] as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(t.logs.some((line) => line.includes(`"reqId":"${id}"`))).toBe(true);
  });

  it('keeps a sane x-request-id sent by the caller', async () => {
    const res = await t.http().get('/healthz').set('x-request-id', 'trace-abc.123').expect(200);
    expect(res.headers['x-request-id']).toBe('trace-abc.123');
  });

  it('never logs the Authorization header', async () => {
    await t.http().get('/v1/me').set('authorization', 'Bearer obk_not-a-real-secret-value').expect(401);
    expect(t.logs.join('\n')).not.toContain('obk_not-a-real-secret-value');
  });
});

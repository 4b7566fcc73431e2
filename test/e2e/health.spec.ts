import { startTestApp, type TestApp } from '../support/test-app';

describe('health and documents', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('GET /healthz answers 200 while the process lives', async () => {
    await t.http().get('/healthz').expect(200, { status: 'ok' });
  });

  it('[MIG-02] GET /readyz answers 200 when the database is reachable and migrated', async () => {
    const res = await t.http().get('/readyz').expect(200);
    expect(res.body).toEqual({ status: 'ready', database: 'up', gate: 'open', pendingMigrations: [] });
  });
});

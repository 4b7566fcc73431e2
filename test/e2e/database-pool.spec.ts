import { Database } from '../../libs/platform/src/database/sql';
import { startTestApp, type TestApp } from '../support/test-app';

describe('the node pool (OPENBOT_DATABASE_POOL_SIZE, decision 046)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_DATABASE_POOL_SIZE: '2' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('holds at most the configured connections: a third statement at once waits for one of the two', async () => {
    const { pool } = t.app.get(Database);
    const statements = [1, 2, 3].map(() => pool.query('SELECT pg_sleep(0.2)'));
    // Idle connections are handed out on the next tick; new ones are opened up to the size.
    await new Promise((resolve) => setImmediate(resolve));
    expect(pool.waitingCount).toBeGreaterThanOrEqual(1);
    await Promise.all(statements);
    expect(pool.totalCount).toBeLessThanOrEqual(2);
  });
});

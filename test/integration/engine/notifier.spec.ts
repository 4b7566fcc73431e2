import { Client, Pool } from 'pg';
import { EVENTS_CHANNEL, Notifier } from '../../../libs/engine/src/logs/node-listener';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';

/**
 * The node's NOTIFY sender (EVT-02): a burst of news about many executions goes out in a few
 * statements, spaced by the interval, and every execution that had news is named in one of them.
 */
describe('engine: notifications after commit', () => {
  let db: TestDatabase;
  let pool: Pool;
  let listener: Client;
  const heard: string[] = [];
  let statements = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    pool.on('error', () => undefined);
    listener = new Client({ connectionString: db.url });
    await listener.connect();
    listener.on('notification', (m) => heard.push(...(m.payload ?? '').split('|')[1]!.split(',')));
    await listener.query(`LISTEN ${EVENTS_CHANNEL}`);
  });
  afterAll(async () => {
    await listener.end();
    await pool.end();
    await db.drop();
  });

  it('[EVT-02] 300 announcements for 30 executions over about 150 ms go out in a handful of statements, and every execution is named', async () => {
    const counting = { query: ((config: unknown) => ((statements++, pool.query(config as never)))) as Pool['query'] };
    const notifier = new Notifier(counting, 'node-a', 20);
    const ids = Array.from({ length: 30 }, (_, i) => `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`);
    for (let round = 0; round < 10; round++) {
      for (const id of ids) notifier.notify(EVENTS_CHANNEL, id);
      await new Promise((r) => setTimeout(r, 15));
    }
    await notifier.drain();
    for (let i = 0; i < 100 && new Set(heard).size < ids.length; i++) await new Promise((r) => setTimeout(r, 20));
    expect(new Set(heard)).toEqual(new Set(ids));
    // One statement per setImmediate turn would be 10 here; spaced by 20 ms over ~150 ms, at most 9.
    expect(statements).toBeLessThanOrEqual(9);
    expect(statements).toBeGreaterThanOrEqual(1);
  });
});

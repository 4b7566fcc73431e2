import { newId } from '@openbot/domain';
import { Pool } from 'pg';
import { renewLeases } from '../../../libs/engine/src/sql/executions';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';

/**
 * Statements that lock many execution rows take them in ID order. A batched phase publish shares
 * them in that order, so a lease renewal in any other order could deadlock with it, and
 * PostgreSQL needs `deadlock_timeout` (1 s) to break that, stalling every stream in the batch.
 */
describe('execution row lock order', () => {
  let db: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 4 });
    pool.on('error', () => undefined);
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  async function owned(id: string): Promise<string> {
    await db.query(
      `INSERT INTO executions (id, workflow, scope_kind, scope_id, state, generation, key_id, data, owner_node, lease_until)
       VALUES ($1, 'test.locks', 'service', $2, 'running', 1, 'k', '\\x00', 'node-l', now() + interval '15 seconds')`,
      [id, newId()],
    );
    return id;
  }

  it('a lease renewal listing its executions in any order waits behind a publish that shares them in ID order, and neither fails', async () => {
    const [low, high] = [newId(), newId()].sort();
    // Stored higher first: a scan meets them in the order the renewal lists them, not by ID.
    await owned(high!);
    await owned(low!);
    const publish = await pool.connect();
    try {
      // The publish shares the lower row first, as its statement does.
      await publish.query('BEGIN');
      await publish.query('SELECT 1 FROM executions WHERE id = $1 FOR SHARE', [low]);
      // The renewal lists the higher row first (the order this node started them in).
      const renewal = renewLeases(pool, 'node-l', [{ id: high!, generation: 1 }, { id: low!, generation: 1 }], 15);
      await new Promise((resolve) => setTimeout(resolve, 150));
      // The publish now shares the higher row: it must not find it held by the waiting renewal.
      const started = performance.now();
      await publish.query('SELECT 1 FROM executions WHERE id = $1 FOR SHARE', [high]);
      await publish.query('COMMIT');
      expect(performance.now() - started).toBeLessThan(900);
      expect([...(await renewal)].sort()).toEqual([low, high]);
    } finally {
      publish.release();
    }
  });
});

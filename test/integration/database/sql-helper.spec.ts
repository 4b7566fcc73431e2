import { Pool } from 'pg';
import { Database } from '../../../libs/openbot/src/database/sql';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';

/** The one query helper of libs/openbot (docs/decisions/023): typed rows, no TypeORM result shapes. */
describe('the query helper on PostgreSQL', () => {
  let database: TestDatabase;
  let pool: Pool;
  let db: Database;

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new Pool({ connectionString: database.url, max: 2 });
    db = new Database(pool);
    await db.count('CREATE TABLE probe (id int PRIMARY KEY, name text NOT NULL)');
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it('answers the rows of a write with RETURNING as rows, not as [rows, count]', async () => {
    const inserted = await db.rows<{ id: number; name: string }>(`INSERT INTO probe (id, name) VALUES (1, 'a'), (2, 'b') RETURNING id, name`);
    expect(inserted).toEqual([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ]);
    expect(await db.one<{ name: string }>('UPDATE probe SET name = $2 WHERE id = $1 RETURNING name', [1, 'A'])).toEqual({ name: 'A' });
    expect(await db.one('SELECT 1 FROM probe WHERE id = $1', [99])).toBeUndefined();
    expect(await db.count('UPDATE probe SET name = name')).toBe(2);
    expect(await db.rows({ name: 'probe.by_id', text: 'SELECT name FROM probe WHERE id = $1', values: [2] })).toEqual([{ name: 'b' }]);
  });

  it('commits a transaction that resolves and rolls back one that throws', async () => {
    await db.transaction(async (tx) => {
      await tx.count(`INSERT INTO probe (id, name) VALUES (3, 'kept')`);
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.count(`INSERT INTO probe (id, name) VALUES (4, 'lost')`);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await db.rows<{ id: number }>('SELECT id FROM probe WHERE id IN (3, 4) ORDER BY id')).toEqual([{ id: 3 }]);
  });

  it('passes PostgreSQL errors through with their code (no ORM wrapper)', async () => {
    await expect(db.count(`INSERT INTO probe (id, name) VALUES (1, 'again')`)).rejects.toMatchObject({ code: '23505', constraint: 'probe_pkey' });
  });
});

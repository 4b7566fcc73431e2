import { Pool } from 'pg';
import { withConnection, withTransaction } from '../../../libs/engine/src/base/tx';
import { Database, type Sql } from '../../../libs/platform/src/database/sql';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';

/** A pipelining pool of one connection whose socket writes are kept, as text, in `written` (pg writes each statement's messages with one). */
function watchedPool(url: string): { pool: Pool; written: string[] } {
  const pool = new Pool({ connectionString: url, max: 1, pipeline: true });
  const written: string[] = [];
  pool.on('connect', (client) => {
    const stream = (client as unknown as { connection: { stream: { _write: (chunk: Buffer, ...a: unknown[]) => void; _writev: (chunks: Array<{ chunk: Buffer }>, ...a: unknown[]) => void } } }).connection.stream;
    const [write, writev] = [stream._write.bind(stream), stream._writev.bind(stream)];
    stream._write = (chunk, ...a) => (written.push(chunk.toString('latin1')), write(chunk, ...a));
    stream._writev = (chunks, ...a) => (written.push(chunks.map((c) => c.chunk.toString('latin1')).join('')), writev(chunks, ...a));
  });
  return { pool, written };
}

/** The one query helper of the platform and the features (docs/decisions/023): typed rows, no TypeORM result shapes. */
describe('the query helper on PostgreSQL', () => {
  let database: TestDatabase;
  let pool: Pool;
  let db: Database;

  beforeAll(async () => {
    database = await createTestDatabase();
    // Pipelining, as the node's pool is (data-source.ts, decision 052).
    pool = new Pool({ connectionString: database.url, max: 2, pipeline: true });
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

  it('sends a transaction\'s BEGIN with its first statement: a failure there rolls back, and the connection serves the next transaction', async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.count(`INSERT INTO probe (id, name) VALUES (1, 'duplicate')`);
      }),
    ).rejects.toMatchObject({ code: '23505' });
    // Both pooled connections run a transaction block again, from its first statement on: SET LOCAL
    // takes effect only inside one (outside, PostgreSQL warns and ignores it).
    const inBlock = (tx: Sql) => tx.count(`SET LOCAL application_name = 'in-block'`).then(() => tx.one<{ name: string }>(`SELECT current_setting('application_name') AS name`));
    expect(await Promise.all([db.transaction(inBlock), db.transaction(inBlock)])).toEqual([{ name: 'in-block' }, { name: 'in-block' }]);
  });

  it('sends statements issued side by side in one socket write: a transaction\'s BEGIN with its first statement, reads sent together', async () => {
    const { pool: counted, written } = watchedPool(database.url);
    try {
      await counted.query('SELECT 1');
      written.length = 0;
      await withTransaction(counted, async (tx) => {
        await tx.query(`INSERT INTO probe (id, name) VALUES (20, 'together')`);
        await tx.query(`UPDATE probe SET name = 'after' WHERE id = 20`);
      });
      // BEGIN with the INSERT, then the UPDATE, then COMMIT.
      expect(written).toHaveLength(3);
      written.length = 0;
      const reads = await withConnection(counted, (client) => Promise.all([1, 2, 3].map((n) => client.query<{ n: number }>('SELECT $1::int AS n', [n]))));
      expect(reads.map((r) => r.rows[0]!.n)).toEqual([1, 2, 3]);
      expect(written).toHaveLength(1);
      expect(await db.one('SELECT name FROM probe WHERE id = 20')).toEqual({ name: 'after' });
    } finally {
      await counted.end();
    }
  });

  it('writes COMMIT right behind statements handed to commitBehind, before they are answered, and keeps their rows', async () => {
    const { pool: watched, written } = watchedPool(database.url);
    try {
      let commitWrittenBeforeAnswer: boolean | null = null;
      const answer = await withTransaction(watched, async (tx) => {
        await tx.query(`INSERT INTO probe (id, name) VALUES (30, 'first')`);
        const slow = tx.query(`INSERT INTO probe (id, name) SELECT 31, 'behind' FROM pg_sleep(0.3)`);
        void slow.then(() => (commitWrittenBeforeAnswer = written.some((w) => w.includes('COMMIT'))));
        tx.commitBehind(slow);
        return 'done';
      });
      expect(answer).toBe('done');
      expect(commitWrittenBeforeAnswer).toBe(true);
      expect(await db.rows('SELECT id, name FROM probe WHERE id IN (30, 31) ORDER BY id')).toEqual([
        { id: 30, name: 'first' },
        { id: 31, name: 'behind' },
      ]);
    } finally {
      await watched.end();
    }
  });

  it('fails a transaction with the error of a statement handed to commitBehind, keeps none of its rows, and leaves the connection usable', async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.count(`INSERT INTO probe (id, name) VALUES (40, 'lost')`);
        tx.commitBehind(tx.count(`INSERT INTO probe (id, name) VALUES (1, 'duplicate')`));
        tx.commitBehind(tx.count(`INSERT INTO probe (id, name) VALUES (41, 'lost too')`));
      }),
    ).rejects.toMatchObject({ code: '23505', constraint: 'probe_pkey' });
    expect(await db.rows('SELECT id FROM probe WHERE id IN (40, 41)')).toEqual([]);
    // Both connections open and commit blocks again.
    const inBlock = (tx: Sql) => tx.count(`SET LOCAL application_name = 'in-block'`).then(() => tx.one<{ name: string }>(`SELECT current_setting('application_name') AS name`));
    expect(await Promise.all([db.transaction(inBlock), db.transaction(inBlock)])).toEqual([{ name: 'in-block' }, { name: 'in-block' }]);
  });

  it('runs side-by-side statements on one connection, each answered with its own rows or its own error', async () => {
    const answers = await withConnection(pool, (client) =>
      Promise.allSettled([
        client.query<{ pid: number; n: number }>('SELECT pg_backend_pid() AS pid, 1 AS n'),
        client.query('SELECT 1 / 0 AS never'),
        client.query<{ pid: number; n: number }>({ name: 'probe.pid', text: 'SELECT pg_backend_pid() AS pid, $1::int AS n', values: [3] }),
      ]),
    );
    expect(answers.map((answer) => answer.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const [first, failed, third] = answers as [PromiseFulfilledResult<{ rows: { pid: number; n: number }[] }>, PromiseRejectedResult, PromiseFulfilledResult<{ rows: { pid: number; n: number }[] }>];
    expect(failed.reason).toMatchObject({ code: '22012' });
    expect(first.value.rows[0]!.n).toBe(1);
    expect(third.value.rows[0]!.n).toBe(3);
    expect(third.value.rows[0]!.pid).toBe(first.value.rows[0]!.pid);
  });
});

import { isConnectionFailure } from '@openbot/domain';
import { Client, Pool, type QueryResult } from 'pg';
import { PreparedClient } from '@openbot/engine/node';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';

/** Counts the Describe messages a client writes (pg's connection, observed, not replaced). */
function countDescribes(client: Client): { readonly count: number } {
  const connection = (client as unknown as { connection: { describe: (...args: unknown[]) => void } }).connection;
  const counter = { count: 0 };
  const describe = connection.describe.bind(connection);
  connection.describe = (...args: unknown[]) => {
    counter.count += 1;
    describe(...args);
  };
  return counter;
}

const SHAPES = {
  name: 'test.prepared_shapes',
  text: `SELECT id, label, n, big, at, doc, raw, flag, tags, missing FROM prepared_rows WHERE id >= $1 ORDER BY id`,
};

/** What a caller keeps of a result: the same for pg's Query and a named run. */
const seen = (result: QueryResult) => ({ command: result.command, rowCount: result.rowCount, oid: result.oid, rows: result.rows, fields: result.fields.map((f) => [f.name, f.dataTypeID]) });

/** Named statements without the per-run row description (decision 062). */
describe('the prepared client', () => {
  let db: TestDatabase;
  let plain: Client;
  let prepared: PreparedClient;

  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
    plain = new Client({ connectionString: db.url });
    prepared = new PreparedClient({ connectionString: db.url, pipeline: true });
    await Promise.all([plain.connect(), prepared.connect()]);
    await plain.query(`CREATE TABLE prepared_rows (
      id int PRIMARY KEY, label text, n int, big bigint, at timestamptz, doc jsonb, raw bytea, flag boolean, tags text[], missing text)`);
    await plain.query(`INSERT INTO prepared_rows VALUES
      (1, 'one', 7, 9007199254740993, '2026-01-02T03:04:05.678Z', '{"a":[1,{"b":null}]}', '\\x00ff', true, '{x,"y z"}', NULL),
      (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`);
  });
  afterAll(async () => {
    await Promise.all([plain?.end(), prepared?.end()]);
    await db?.drop();
  });

  it('answers a named statement as pg does, and describes it only on its first run on a connection', async () => {
    const describes = countDescribes(prepared);
    const expected = seen(await plain.query({ ...SHAPES, values: [1] }));
    expect(expected.rows[0]).toMatchObject({ big: '9007199254740993', at: new Date('2026-01-02T03:04:05.678Z'), doc: { a: [1, { b: null }] }, tags: ['x', 'y z'] });

    const first = seen(await prepared.query({ ...SHAPES, values: [1] }));
    const second = seen(await prepared.query({ ...SHAPES, values: [1] }));
    expect(first).toEqual(expected);
    expect(second).toEqual(expected);
    expect(describes.count).toBe(1);
    // Rows are fresh objects on every run, with the columns in the statement's order.
    expect(Object.keys(second.rows[0] as object)).toEqual(['id', 'label', 'n', 'big', 'at', 'doc', 'raw', 'flag', 'tags', 'missing']);
  });

  it('reports the command and row count of writes, and an empty shape for a statement without columns', async () => {
    const describes = countDescribes(prepared);
    const bump = { name: 'test.prepared_bump', text: 'UPDATE prepared_rows SET n = coalesce(n, 0) + 1 WHERE id <= $1' };
    const insert = { name: 'test.prepared_insert', text: 'INSERT INTO prepared_rows (id) SELECT g FROM generate_series($1::int, $2::int) g' };
    for (let run = 0; run < 2; run++) {
      expect(seen(await prepared.query({ ...bump, values: [2] }))).toEqual({ command: 'UPDATE', rowCount: 2, oid: null, rows: [], fields: [] });
    }
    expect(seen(await prepared.query({ ...insert, values: [10, 12] }))).toEqual({ command: 'INSERT', rowCount: 3, oid: 0, rows: [], fields: [] });
    expect(describes.count).toBe(2);
    await plain.query('DELETE FROM prepared_rows WHERE id >= 10');
  });

  it('fails one run with its database error and keeps the pipeline behind it', async () => {
    const insertOne = { name: 'test.prepared_insert_one', text: 'INSERT INTO prepared_rows (id, label) VALUES ($1, $2) RETURNING label' };
    try {
      const [duplicate, fresh, read] = await Promise.allSettled([
        prepared.query({ ...insertOne, values: [1, 'again'] }),
        prepared.query({ ...insertOne, values: [20, 'twenty'] }),
        prepared.query({ ...SHAPES, values: [20] }),
      ]);
      expect(duplicate).toMatchObject({ status: 'rejected', reason: { code: '23505' } });
      // Its stack leads back to the caller that awaited it, as pg's own errors do.
      expect((duplicate as PromiseRejectedResult).reason.stack).toContain('prepared-client.spec');
      expect(fresh).toMatchObject({ status: 'fulfilled', value: { rowCount: 1, rows: [{ label: 'twenty' }] } });
      expect(read).toMatchObject({ status: 'fulfilled', value: { rows: [{ id: 20, label: 'twenty' }] } });
    } finally {
      await plain.query('DELETE FROM prepared_rows WHERE id = 20');
    }
  });

  it('refuses a value it cannot send and a name reused with another text, without writing either', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(prepared.query({ ...SHAPES, values: [cyclic] })).rejects.toThrow(/circular/i);
    await expect(prepared.query({ name: SHAPES.name, text: 'SELECT 1', values: [] })).rejects.toThrow(/must be unique/);
    expect((await prepared.query({ ...SHAPES, values: [2] })).rows).toEqual([expect.objectContaining({ id: 2, label: null })]);
  });

  it('learns a statement again on a new connection, whose shape may differ', async () => {
    const all = { name: 'test.prepared_all', text: 'SELECT * FROM prepared_rows WHERE id = $1' };
    const other = new PreparedClient({ connectionString: db.url, pipeline: true });
    await other.connect();
    try {
      expect(Object.keys((await prepared.query({ ...all, values: [1] })).rows[0] as object)).not.toContain('extra');
      await plain.query(`ALTER TABLE prepared_rows ADD COLUMN extra text DEFAULT 'new'`);
      const row = (await other.query({ ...all, values: [1] })).rows[0] as Record<string, unknown>;
      expect(row.extra).toBe('new');
      // The first connection's prepared statement no longer fits the table: PostgreSQL says so instead of answering with the old shape.
      await expect(prepared.query({ ...all, values: [1] })).rejects.toThrow(/cached plan must not change result type/);
    } finally {
      await plain.query('ALTER TABLE prepared_rows DROP COLUMN extra');
      await other.end();
    }
  });

  it('fails every run in flight as a connection failure when its backend is terminated, and a run after it the same way', async () => {
    const victim = new PreparedClient({ connectionString: db.url, pipeline: true });
    victim.on('error', () => undefined);
    await victim.connect();
    const sleep = { name: 'test.prepared_sleep', text: 'SELECT pg_sleep($1::float8) AS slept' };
    const pid = (await victim.query({ name: 'test.prepared_pid', text: 'SELECT pg_backend_pid() AS pid', values: [] })).rows[0]!.pid as number;
    const runs = [victim.query({ ...sleep, values: [30] }), victim.query({ ...SHAPES, values: [1] }), victim.query({ ...sleep, values: [0] })];
    await plain.query('SELECT pg_terminate_backend($1)', [pid]);
    const outcomes = await Promise.allSettled(runs);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      expect(isConnectionFailure((outcome as PromiseRejectedResult).reason)).toBe(true);
    }
    const after = await victim.query({ ...SHAPES, values: [1] }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(isConnectionFailure(after)).toBe(true);
    await victim.end().catch(() => undefined);
  });

  it('runs through a pool with callbacks, and leaves plain text, row modes and unnamed statements to pg', async () => {
    const pool = new Pool({ connectionString: db.url, Client: PreparedClient, max: 2 });
    try {
      const viaPool = await pool.query({ ...SHAPES, values: [2] });
      expect(viaPool.rows).toEqual([expect.objectContaining({ id: 2 })]);
      const callbackResult = await new Promise<QueryResult>((resolve, reject) =>
        pool.query({ ...SHAPES, values: [2] }, (error: Error | undefined, result: QueryResult) => (error ? reject(error) : resolve(result))),
      );
      expect(callbackResult.rows).toEqual(viaPool.rows);
      expect((await pool.query('SELECT $1::int AS v', [5])).rows).toEqual([{ v: 5 }]);
      expect((await pool.query({ name: 'test.prepared_array', text: 'SELECT 1 AS a, 2 AS b', rowMode: 'array' })).rows).toEqual([[1, 2]]);
    } finally {
      await pool.end();
    }
  });
});

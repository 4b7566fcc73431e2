import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { createDataSource } from '../../libs/features/src/features';
import { migrate, pendingMigrations } from '../../libs/platform/src/database/migrate';
import { MIGRATIONS } from '../../migrations';
import { startTestApp, type TestApp } from '../support/test-app';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const BASELINE_FILE = join(__dirname, '..', '..', 'migrations', '1764500000000-baseline.ts');
/**
 * The baseline migration never changes (MIG-01): databases already migrated by it would never
 * see the change. If this hash no longer matches, revert the edit and write a NEW migration
 * (migrations/<timestamp>-<name>.ts, listed in migrations/index.ts) instead. Never update this pin.
 */
const BASELINE_SHA256 = '18903f008b13873de516265f9045d79433e4b89127b4b31c91f646fa65545519';
const BASELINE_NAME = 'Baseline1764500000000';
/** Same constant as libs/platform/src/database/migrate.ts ("openbot" in ASCII). */
const MIGRATION_LOCK = 0x6f70656e626f74n;

const migrationNames = (): string[] => MIGRATIONS.map((M) => new M().name ?? M.name);

/** On an unmigrated database every migration is pending, in order; other install steps (pg-boss) may follow. */
function expectAllPending(pending: readonly string[]): void {
  const names = migrationNames();
  expect(pending.slice(0, names.length)).toEqual(names);
}

async function publicTables(db: TestDatabase): Promise<string[]> {
  const rows = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
  );
  return rows.map((r) => r.table_name);
}

async function appliedRows(db: TestDatabase): Promise<string[]> {
  const rows = await db.query<{ name: string }>('SELECT name FROM typeorm_migrations ORDER BY id');
  return rows.map((r) => r.name);
}

describe('[MIG-01] migrations', () => {
  const opened: DataSource[] = [];
  const databases: TestDatabase[] = [];
  const open = async (url: string): Promise<DataSource> => {
    const ds = await createDataSource({ url, migrations: MIGRATIONS, poolSize: 3 }).initialize();
    opened.push(ds);
    return ds;
  };
  const database = async (options: { empty?: boolean } = {}): Promise<TestDatabase> => {
    const db = await createTestDatabase(options);
    databases.push(db);
    return db;
  };

  afterAll(async () => {
    for (const ds of opened) if (ds.isInitialized) await ds.destroy();
    for (const db of databases) await db.drop();
  });

  it('[MIG-01] the baseline is the first migration and its file never changes', () => {
    expect(migrationNames()[0]).toBe(BASELINE_NAME);
    const sha256 = createHash('sha256').update(readFileSync(BASELINE_FILE)).digest('hex');
    if (sha256 !== BASELINE_SHA256) {
      throw new Error(
        `migrations/1764500000000-baseline.ts changed (sha256 ${sha256}). The baseline never changes (MIG-01): ` +
          'revert it and put the schema change in a new migration.',
      );
    }
  });

  it('[MIG-01] migration names are unique and in timestamp order', () => {
    const names = migrationNames();
    expect(new Set(names).size).toBe(names.length);
    const stamps = names.map((n) => Number(/(\d{13})$/.exec(n)?.[1]));
    expect(stamps.every((s) => Number.isInteger(s))).toBe(true);
    expect([...stamps].sort((a, b) => a - b)).toEqual(stamps);
  });

  it('[MIG-01] no schema drift: on a migrated database the entities need no DDL', async () => {
    const db = await database();
    const ds = await open(db.url);
    expect(await pendingMigrations(ds)).toEqual([]);
    const sql = await ds.driver.createSchemaBuilder().log();
    const up = sql.upQueries.map((q) => q.query);
    if (up.length > 0) {
      throw new Error(`entities and migrations disagree; a new migration needs:\n${up.join(';\n')}`);
    }
  });

  it('[MIG-01] migrate() applies every migration once on an empty database, even from 3 nodes at once', async () => {
    const db = await database({ empty: true });
    expect(await publicTables(db)).toEqual([]);
    const nodes = await Promise.all([open(db.url), open(db.url), open(db.url)]);
    expectAllPending(await pendingMigrations(nodes[0]!));
    const results = await Promise.all(nodes.map((ds) => migrate(ds)));
    const applied = results.flatMap((r) => r.applied);
    expect(applied.sort()).toEqual(migrationNames().sort());
    expect(applied.filter((n) => n === BASELINE_NAME)).toHaveLength(1);
    expect(await appliedRows(db)).toEqual(migrationNames());
    for (const ds of nodes) expect(await pendingMigrations(ds)).toEqual([]);

    // A second run on the migrated database applies nothing.
    const again = await Promise.all(nodes.map((ds) => migrate(ds)));
    expect(again.map((r) => r.applied)).toEqual([[], [], []]);
    expect(await appliedRows(db)).toEqual(migrationNames());
  });

  it('[MIG-01] migrate() waits for the advisory lock another node holds', async () => {
    const db = await database({ empty: true });
    const ds = await open(db.url);
    const holder = new Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
      let done = false;
      const running = migrate(ds).then((r) => {
        done = true;
        return r;
      });
      await new Promise((r) => setTimeout(r, 700));
      expect(done).toBe(false);
      expect(await publicTables(db)).toEqual([]);
      await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()]);
      expect((await running).applied).toEqual(migrationNames());
    } finally {
      await holder.end();
    }
    // The lock is released afterwards: another session can take it at once.
    const [{ locked }] = await db.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [MIGRATION_LOCK.toString()]);
    expect(locked).toBe(true);
  });

  it('[MIG-01] pendingMigrations() on an empty database reads only: it creates no table', async () => {
    const db = await database({ empty: true });
    const ds = await open(db.url);
    expectAllPending(await pendingMigrations(ds));
    expect(await publicTables(db)).toEqual([]);
  });
});

describe('[MIG-02] startup gate on an unmigrated database', () => {
  let db: TestDatabase;
  let t: TestApp;

  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
    t = await startTestApp({ database: db });
  });

  afterAll(async () => {
    await t?.close();
    await db?.drop();
  });

  it('[MIG-02] /readyz answers 503 with the gate closed and the pending migrations named', async () => {
    const res = await t.http().get('/readyz').expect(503);
    expect(res.body).toEqual({ status: 'not-ready', database: 'up', gate: 'closed', pendingMigrations: expect.any(Array) });
    expectAllPending(res.body.pendingMigrations);
    expect(res.body.pendingMigrations).toContain(BASELINE_NAME);
  });

  it('[MIG-02] /healthz still answers 200 (the process lives)', async () => {
    await t.http().get('/healthz').expect(200);
  });

  it('[MIG-02] an API route answers 503 RequestFailed unavailable while the gate is closed', async () => {
    for (const auth of ['Bearer obk_00000000000000000000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', `Bearer ${t.adminToken}`]) {
      const res = await t.http().get('/v1/me').set('authorization', auth).expect(503);
      expect(res.body).toEqual({ type: 'RequestFailed', category: 'unavailable', errorId: expect.any(String) });
      expect(res.headers['openbot-error-id']).toBe(res.body.errorId);
    }
    const res = await t.http().post('/v1/organizations').set('authorization', `Bearer ${t.adminToken}`).send({ name: 'Early' }).expect(503);
    expect(res.body).toMatchObject({ type: 'RequestFailed', category: 'unavailable' });
  });

  it('[MIG-01] the serving node ran no DDL: the database has no table at all, not even typeorm_migrations', async () => {
    expect(await publicTables(db)).toEqual([]);
    const [{ n }] = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
        WHERE s.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')`,
    );
    expect(Number(n)).toBe(0);
  });

  it('[MIG-02] after `migrate` the gate opens on the next /readyz and API routes serve', async () => {
    const ds = await createDataSource({ url: db.url, migrations: MIGRATIONS, poolSize: 2 }).initialize();
    try {
      expect((await migrate(ds)).applied).toEqual(migrationNames());
    } finally {
      await ds.destroy();
    }
    const res = await t.http().get('/readyz').expect(200);
    expect(res.body).toEqual({ status: 'ready', database: 'up', gate: 'open', pendingMigrations: [] });
    const org = await t.createOrganization('After migrate');
    const me = await t.http().get('/v1/me').set('authorization', `Bearer ${org.secret}`).expect(200);
    expect(me.body.organization).toEqual({ id: org.organizationId, name: 'After migrate' });
  });
});

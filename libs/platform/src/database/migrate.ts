import { ADVANCE_QUEUE, BOSS_OWN_BOOKKEEPING_OFF } from '@openbot/engine/node';
import { PgBoss } from 'pg-boss';
import type { DataSource } from 'typeorm';

/** Any fixed 64-bit number; every node running `openbot migrate` takes the same lock. */
const MIGRATION_LOCK = 0x6f70656e626f74n; // "openbot"

export interface MigrationResult {
  readonly applied: readonly string[];
}

/**
 * Applies pending migrations under a PostgreSQL advisory lock, so several nodes starting at
 * once on one database are safe (docs/architecture.md). Each migration runs in its own transaction.
 */
export async function migrate(dataSource: DataSource): Promise<MigrationResult> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      await installQueues(connectionString(dataSource));
      return { applied: applied.map((m) => m.name) };
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()]);
    }
  } finally {
    await runner.release();
  }
}

/**
 * The names of migrations this build knows that the database has not applied. Reads only:
 * TypeORM's own `showMigrations` creates its table when missing, which would be DDL at runtime.
 */
export async function pendingMigrations(dataSource: DataSource): Promise<string[]> {
  const known = dataSource.migrations.map((m) => m.name ?? m.constructor.name);
  const [{ table }] = (await dataSource.query(`SELECT to_regclass('typeorm_migrations')::text AS "table"`)) as [
    { table: string | null },
  ];
  const [{ boss }] = (await dataSource.query(`SELECT to_regclass('pgboss.version')::text AS "boss"`)) as [{ boss: string | null }];
  const queues = boss === null ? ['pg-boss schema'] : [];
  if (table === null) return [...known, ...queues];
  const rows = (await dataSource.query('SELECT name FROM typeorm_migrations')) as Array<{ name: string }>;
  const applied = new Set(rows.map((r) => r.name));
  return [...known.filter((name) => !applied.has(name)), ...queues];
}

/**
 * pg-boss keeps its jobs in its own schema; installing or upgrading it and creating the
 * engine's queue is DDL, so it happens here and never in `openbot serve` (MIG-01).
 */
async function installQueues(url: string): Promise<void> {
  const boss = new PgBoss({ connectionString: url, max: 2, migrate: true, schedule: false, supervise: false, ...BOSS_OWN_BOOKKEEPING_OFF });
  boss.on('error', () => undefined);
  await boss.start();
  try {
    if ((await boss.getQueue(ADVANCE_QUEUE)) === null) {
      await boss.createQueue(ADVANCE_QUEUE, { retryLimit: 5, retryDelay: 1, retryBackoff: true });
    }
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
}

function connectionString(dataSource: DataSource): string {
  const url = (dataSource.options as { url?: string }).url;
  if (url === undefined) throw new Error('the DataSource has no url');
  return url;
}

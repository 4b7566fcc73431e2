import type { DataSource } from 'typeorm';

/** Any fixed 64-bit number; every node running `openbot migrate` takes the same lock. */
const MIGRATION_LOCK = 0x6f70656e626f74n; // "openbot"

export interface MigrationResult {
  readonly applied: readonly string[];
}

/**
 * Applies pending migrations under a PostgreSQL advisory lock, so several nodes starting at
 * once on one database are safe (API.md). Each migration runs in its own transaction.
 */
export async function migrate(dataSource: DataSource): Promise<MigrationResult> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
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
  if (table === null) return known;
  const rows = (await dataSource.query('SELECT name FROM typeorm_migrations')) as Array<{ name: string }>;
  const applied = new Set(rows.map((r) => r.name));
  return known.filter((name) => !applied.has(name));
}

import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/** The pg pool TypeORM owns: engine calls and prepared statements run on it (docs/architecture.md). */
export function poolOf(dataSource: DataSource): Pool {
  // The data source is PostgreSQL's (database/data-source.ts): its driver holds the pool as `master`.
  const driver = dataSource.driver as PostgresDriver;
  return driver.master as Pool;
}

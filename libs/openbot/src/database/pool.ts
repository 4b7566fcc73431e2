import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';

/** The pg pool TypeORM owns: engine calls and prepared statements run on it (docs/architecture.md). */
export function poolOf(dataSource: DataSource): Pool {
  return (dataSource.driver as unknown as { master: Pool }).master;
}

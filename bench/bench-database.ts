import '../apps/server/src/module-paths';
import { createDataSource } from '@openbot/features';
import { EmbeddedPostgres, migrate } from '@openbot/platform';
import { join } from 'node:path';
import { Client } from 'pg';
import { MIGRATIONS } from '../migrations';
import { stopOnInterrupt } from './interrupt';

/**
 * The database the server benchmarks run on: an embedded PostgreSQL with default settings in
 * `work/pg`, and a database `bench` migrated to the current schema. Stop `cluster` when done.
 * `statements` (the diagnostic `BENCH_PG_STATEMENTS=1`) loads pg_stat_statements, for `statementLines`.
 */
export async function startBenchDatabase(work: string, options: { statements?: boolean } = {}): Promise<{ cluster: EmbeddedPostgres; url: string }> {
  const cluster = new EmbeddedPostgres({
    dir: join(work, 'pg'),
    ephemeral: true,
    settings: { max_connections: '200', ...(options.statements === true ? { shared_preload_libraries: 'pg_stat_statements' } : {}) },
  });
  stopOnInterrupt(() => cluster.stop());
  await cluster.start();
  try {
    const admin = new Client({ connectionString: cluster.socketUrl() });
    await admin.connect();
    await admin.query('CREATE DATABASE bench');
    await admin.end();
    const url = cluster.socketUrl('bench');
    const dataSource = await createDataSource({ url, migrations: MIGRATIONS, poolSize: 2 }).initialize();
    await migrate(dataSource);
    if (options.statements === true) await dataSource.query('CREATE EXTENSION pg_stat_statements');
    await dataSource.destroy();
    return { cluster, url };
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

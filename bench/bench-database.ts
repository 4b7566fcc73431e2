import '../apps/server/src/module-paths';
import { createDataSource, EmbeddedPostgres, migrate } from '@openbot/openbot';
import { join } from 'node:path';
import { Client } from 'pg';
import { MIGRATIONS } from '../migrations';

/**
 * The database the server benchmarks run on: an embedded PostgreSQL with default settings in
 * `work/pg`, and a database `bench` migrated to the current schema. Stop `cluster` when done.
 */
export async function startBenchDatabase(work: string): Promise<{ cluster: EmbeddedPostgres; url: string }> {
  const cluster = new EmbeddedPostgres({ dir: join(work, 'pg'), ephemeral: true, settings: { max_connections: '200' } });
  await cluster.start();
  try {
    const admin = new Client({ connectionString: cluster.socketUrl() });
    await admin.connect();
    await admin.query('CREATE DATABASE bench');
    await admin.end();
    const url = cluster.socketUrl('bench');
    const dataSource = await createDataSource({ url, migrations: MIGRATIONS, poolSize: 2 }).initialize();
    await migrate(dataSource);
    await dataSource.destroy();
    return { cluster, url };
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

import './register-aliases';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { createDataSource } from '../../libs/features/src/features';
import { EmbeddedPostgres } from '../../libs/platform/src/database/embedded-postgres';
import { migrate } from '../../libs/platform/src/database/migrate';
import { MIGRATIONS } from '../../migrations';
import { TEMPLATE_DATABASE, TEST_PG_URL_ENV } from './cluster';

/**
 * Starts one throwaway PostgreSQL for the whole run and migrates a template database; each
 * test file clones its own database from the template (test/support/test-database.ts).
 */
export default async function globalSetup(): Promise<void> {
  const cluster = new EmbeddedPostgres({
    dir: join(tmpdir(), `openbot-test-pg-${process.pid}`),
    ephemeral: true,
    settings: { max_connections: '300', fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
  });
  await cluster.start();
  (globalThis as { __openbotTestCluster?: EmbeddedPostgres }).__openbotTestCluster = cluster;
  process.env[TEST_PG_URL_ENV] = cluster.url('postgres');
  const admin = new Client({ connectionString: cluster.url('postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await admin.end();
  const template = await createDataSource({ url: cluster.url(TEMPLATE_DATABASE), migrations: MIGRATIONS, poolSize: 2 }).initialize();
  await migrate(template);
  await template.destroy();
}

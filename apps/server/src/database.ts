import { EmbeddedPostgres, type Config } from '@openbot/platform';
import { join } from 'node:path';
import { Client } from 'pg';

export interface Database {
  readonly url: string;
  /** The embedded cluster when this process started one; null for DATABASE_URL. */
  readonly embedded: EmbeddedPostgres | null;
}

const EMBEDDED_DATABASE = 'openbot';

/** DATABASE_URL when set; otherwise a real PostgreSQL under the data dir, reused across starts. */
export async function openDatabase(config: Config, log: (line: string) => void): Promise<Database> {
  if (config.databaseUrl !== null) return { url: config.databaseUrl, embedded: null };
  const embedded = new EmbeddedPostgres({
    dir: join(config.dataDir, 'postgres'),
    onLog: (line) => {
      if (/ERROR|FATAL|PANIC/.test(line)) log(`postgres: ${line}`);
    },
  });
  await embedded.start();
  const admin = new Client({ connectionString: embedded.socketUrl() });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DATABASE]);
    if (rowCount === 0) await admin.query(`CREATE DATABASE ${EMBEDDED_DATABASE}`);
  } finally {
    await admin.end();
  }
  return { url: embedded.socketUrl(EMBEDDED_DATABASE), embedded };
}

import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { clusterUrl, TEMPLATE_DATABASE } from './cluster';

export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  /** Runs SQL as the cluster superuser on this database (for inspecting or corrupting rows). */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

/** A fresh database for one test file: a copy of the migrated template (empty = unmigrated). */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const name = `t_${process.env.JEST_WORKER_ID ?? '0'}_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: clusterUrl('postgres') });
  await admin.connect();
  try {
    await admin.query(options.empty ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`);
  } finally {
    await admin.end();
  }
  const url = clusterUrl(name);
  return {
    name,
    url,
    async query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(sql, params)).rows as T[];
      } finally {
        await client.end();
      }
    },
    async drop(): Promise<void> {
      const client = new Client({ connectionString: clusterUrl('postgres') });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

import type { Pool, PoolClient } from 'pg';
import { isConnectionFailure } from './storage-retry';

/** Runs `work` in one transaction on a pooled client; rolls back on any error. */
export async function withTransaction<T>(pool: Pool, work: (tx: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    broken = isConnectionFailure(error);
    if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
    throw error;
  } finally {
    client.release(broken);
  }
}

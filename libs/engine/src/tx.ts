import type { Pool, PoolClient } from 'pg';
import { isConnectionFailure } from './storage-retry';

/** Runs `work` in one transaction on a pooled client; rolls back on any error. */
export async function withTransaction<T>(pool: Pool, work: (tx: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  // A checked-out client has no pool error listener: a connection that dies between statements
  // (terminated backend, database restart) would emit an unheard 'error' and crash the node.
  // The next statement then fails as a connection failure, which the caller retries (CALL-06).
  const onError = (): void => {
    broken = true;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    broken = broken || isConnectionFailure(error);
    if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
    throw error;
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}

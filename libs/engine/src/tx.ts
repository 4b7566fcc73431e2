import type { Pool, PoolClient } from 'pg';
import { isConnectionFailure } from './storage-retry';

/**
 * Runs `work` in one transaction on a pooled client; rolls back on any error.
 *
 * `BEGIN` is not waited for on its own: on a pipelining pool (decision 052) it goes out with the
 * transaction's first statement, and the server runs them in order. Its answer is checked before
 * `COMMIT`, so a failed `BEGIN` still fails the transaction.
 */
export async function withTransaction<T>(pool: Pool, work: (tx: PoolClient) => Promise<T>): Promise<T> {
  return withCheckedOut(pool, async (client, checkout) => {
    const begin = client.query('BEGIN');
    // Answered below; a failure here also fails the statements behind it.
    begin.catch(() => undefined);
    try {
      const result = await work(client);
      await begin;
      await client.query('COMMIT');
      return result;
    } catch (error) {
      if (!checkout.broken && !isConnectionFailure(error)) await client.query('ROLLBACK').catch(() => (checkout.broken = true));
      throw error;
    }
  });
}

/**
 * Runs `work` on one pooled client, outside a transaction: independent reads issued side by side
 * on it go out together on a pipelining pool (decision 052), with one wait for a connection and
 * one round trip instead of one each.
 */
export function withConnection<T>(pool: Pool, work: (db: PoolClient) => Promise<T>): Promise<T> {
  return withCheckedOut(pool, work);
}

/** A checked-out client is broken when its connection failed: it is then dropped, not given back. */
interface Checkout {
  broken: boolean;
}

async function withCheckedOut<T>(pool: Pool, work: (client: PoolClient, checkout: Checkout) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const checkout: Checkout = { broken: false };
  sendTogether(client);
  // A checked-out client has no pool error listener: a connection that dies between statements
  // (terminated backend, database restart) would emit an unheard 'error' and crash the node.
  // The next statement then fails as a connection failure, which the caller retries (CALL-06).
  const onError = (): void => {
    checkout.broken = true;
  };
  client.on('error', onError);
  try {
    return await work(client, checkout);
  } catch (error) {
    checkout.broken = checkout.broken || isConnectionFailure(error);
    throw error;
  } finally {
    client.removeListener('error', onError);
    client.release(checkout.broken);
  }
}

/**
 * Holds the connection's writes until this tick's work is done, so the statements issued side by
 * side at the start (`BEGIN` and the first statement, reads sent together) leave in one socket
 * write: on a 2-core host each write that wakes the database costs as much as a short statement.
 * Released at the next tick, whatever the work does; a client without a socket is left as it is.
 */
function sendTogether(client: PoolClient): void {
  const stream = (client as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } }).connection?.stream;
  if (stream?.cork === undefined || stream.uncork === undefined) return;
  stream.cork();
  process.nextTick(() => stream.uncork!());
}

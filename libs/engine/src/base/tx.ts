import type { Pool, PoolClient } from 'pg';
import { isConnectionFailure } from './storage-retry';

/**
 * Hands the transaction statements its work sent without waiting for their answers: `COMMIT` is
 * written right behind them (one round trip instead of two), and a failure of any of them fails
 * the transaction with that statement's error (PostgreSQL then answers the `COMMIT` by rolling
 * back, so nothing of it is kept).
 */
export type CommitBehind = (sent: Promise<unknown>) => void;

/**
 * Runs `work` in one transaction on a pooled client; rolls back on any error.
 *
 * `BEGIN` is not waited for on its own: on a pipelining pool (decision 052) it goes out with the
 * transaction's first statement, and the server runs them in order. Its answer is checked before
 * `COMMIT`, so a failed `BEGIN` still fails the transaction. Statements handed to `commitBehind`
 * are answered after `COMMIT` was written (see CommitBehind).
 */
export async function withTransaction<T>(pool: Pool, work: (tx: PoolClient, commitBehind: CommitBehind) => Promise<T>): Promise<T> {
  return withCheckedOut(pool, async (client, checkout) => {
    const begin = client.query('BEGIN');
    // Answered below; a failure here also fails the statements behind it.
    begin.catch(() => undefined);
    const behind: Array<Promise<unknown>> = [];
    let ended = false;
    try {
      const result = await work(client, (sent) => {
        sent.catch(() => undefined);
        behind.push(sent);
      });
      await begin;
      const commit = client.query('COMMIT');
      // Written, the COMMIT ends the block whatever it answers: a failure there rolled back already.
      ended = true;
      const answers = await Promise.allSettled([...behind, commit]);
      const failed = answers.find((answer): answer is PromiseRejectedResult => answer.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      // A statement that failed unseen made PostgreSQL roll back: never report that as committed.
      if ((answers.at(-1) as PromiseFulfilledResult<{ command?: string }>).value.command === 'ROLLBACK') throw new Error('the transaction was rolled back at COMMIT');
      return result;
    } catch (error) {
      if (!ended && !checkout.broken && !isConnectionFailure(error)) await client.query('ROLLBACK').catch(() => (checkout.broken = true));
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

import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import type { Queryable } from './ports';
import { isConnectionFailure } from './storage-retry';

/**
 * One transaction that does its own after-commit work (docs/decisions/077-transaction-scoped-engine-handle.md):
 * what must follow the COMMIT (run a submitted execution on this node, tell a signalled one's
 * owner) is handed to it, not remembered by its caller. `engine.in(tx)` takes one.
 */
export interface Transaction extends Queryable {
  /** Runs `work` once this transaction committed; dropped when it rolls back. It must not throw. */
  afterCommit(work: () => void): void;
  /**
   * Hands a statement sent without waiting for its answer: `COMMIT` is written right behind it
   * (one round trip instead of two), and its failure fails the transaction with its own error
   * (PostgreSQL then answers the `COMMIT` by rolling back, so nothing of it is kept).
   */
  commitBehind(sent: Promise<unknown>): void;
}

/** A transaction on one pooled client: its statements, and what it does behind and after its COMMIT. */
class ClientTransaction implements Transaction {
  readonly behind: Array<Promise<unknown>> = [];
  readonly after: Array<() => void> = [];

  constructor(private readonly client: PoolClient) {}

  query<R extends QueryResultRow = QueryResultRow>(config: QueryConfig | string, values?: unknown[]): Promise<QueryResult<R>> {
    return this.client.query<R>(config, values);
  }

  afterCommit(work: () => void): void {
    this.after.push(work);
  }

  commitBehind(sent: Promise<unknown>): void {
    sent.catch(() => undefined);
    this.behind.push(sent);
  }

  /** The first statement handed on unanswered that failed: the cause of every later statement's "transaction is aborted". */
  async failedBehind(): Promise<unknown> {
    const answers = await Promise.allSettled(this.behind);
    return answers.find((answer): answer is PromiseRejectedResult => answer.status === 'rejected')?.reason;
  }

  committed(): void {
    for (const work of this.after) {
      try {
        work();
      } catch {
        // Committed is committed: after-commit work only speeds things up (recovery jobs are its fallback).
      }
    }
  }
}

/**
 * Runs `work` in one transaction on a pooled client; rolls back on any error. After COMMIT it
 * runs the work handed to `afterCommit`; a rollback drops it.
 *
 * `BEGIN` is not waited for on its own: on a pipelining pool (decision 052) it goes out with the
 * transaction's first statement, and the server runs them in order. Its answer is checked before
 * `COMMIT`, so a failed `BEGIN` still fails the transaction. Statements handed to `commitBehind`
 * are answered after `COMMIT` was written; when one of them failed, its error is the one thrown.
 */
export async function withTransaction<T>(pool: Pool, work: (tx: Transaction) => Promise<T>): Promise<T> {
  return withCheckedOut(pool, async (client, checkout) => {
    const begin = client.query('BEGIN');
    // Answered below; a failure here also fails the statements behind it.
    begin.catch(() => undefined);
    const tx = new ClientTransaction(client);
    let ended = false;
    try {
      const result = await work(tx);
      await begin;
      const commit = client.query('COMMIT');
      // Written, the COMMIT ends the block whatever it answers: a failure there rolled back already.
      ended = true;
      const answers = await Promise.allSettled([...tx.behind, commit]);
      const failed = answers.find((answer): answer is PromiseRejectedResult => answer.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      // A statement that failed unseen made PostgreSQL roll back: never report that as committed.
      if ((answers.at(-1) as PromiseFulfilledResult<{ command?: string }>).value.command === 'ROLLBACK') throw new Error('the transaction was rolled back at COMMIT');
      tx.committed();
      return result;
    } catch (error) {
      if (!ended && !checkout.broken && !isConnectionFailure(error)) await client.query('ROLLBACK').catch(() => (checkout.broken = true));
      // A statement handed on unanswered failed first: later ones only report the aborted transaction.
      throw (!ended && isAbortedTransaction(error) ? await tx.failedBehind() : undefined) ?? error;
    }
  });
}

/** PostgreSQL's "current transaction is aborted": an earlier statement of it failed. */
function isAbortedTransaction(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '25P02';
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
  // Typed as always there, but a client of another kind (a test's, a proxy) may have no socket.
  const connection: { readonly stream?: { cork?: () => void; uncork?: () => void } } | undefined = client.connection;
  const stream = connection?.stream;
  if (stream?.cork === undefined || stream.uncork === undefined) return;
  stream.cork();
  process.nextTick(() => stream.uncork!());
}

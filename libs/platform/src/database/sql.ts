import { type Queryable, type Transaction } from '@openbot/engine';
import { withConnection, withTransaction } from '@openbot/engine/node';
import type { Pool, QueryConfig, QueryResult, QueryResultRow } from 'pg';

/** A statement: plain text, or a named prepared statement on a hot path (`{ name, text, values }`). */
export type Statement = string | QueryConfig;

/**
 * The one way handlers and workflows run SQL (docs/decisions/023-one-data-access-style.md): on
 * the pg pool TypeORM owns, or on a client inside a transaction. Rows come back typed, with no
 * TypeORM result shapes (`[rows, count]` for writes). It is a `Queryable` too, so the engine's
 * and the usage helpers' `(db: Queryable)` functions take it as they are.
 */
export class Sql implements Queryable {
  constructor(private readonly db: Queryable) {}

  /** Every row the statement answers. */
  async rows<T = Record<string, unknown>>(statement: Statement, params: readonly unknown[] = []): Promise<T[]> {
    return (await this.run(statement, params)).rows as T[];
  }

  /** The first row, or undefined when there is none. */
  async one<T = Record<string, unknown>>(statement: Statement, params: readonly unknown[] = []): Promise<T | undefined> {
    return (await this.run(statement, params)).rows[0] as T | undefined;
  }

  /** How many rows the statement changed (or answered). */
  async count(statement: Statement, params: readonly unknown[] = []): Promise<number> {
    return (await this.run(statement, params)).rowCount ?? 0;
  }

  query<R extends QueryResultRow = QueryResultRow>(config: QueryConfig | string, values?: unknown[]): Promise<QueryResult<R>> {
    return this.db.query<R>(config, values);
  }

  protected run(statement: Statement, params: readonly unknown[]): Promise<QueryResult> {
    return typeof statement === 'string' ? this.db.query(statement, [...params]) : this.db.query(statement);
  }
}

/** The node's database: statements on the pool, and transactions for writes. */
export class Database extends Sql {
  constructor(readonly pool: Pool) {
    super(pool);
  }

  /**
   * Runs `work` in one transaction; it commits when `work` resolves and rolls back when it throws.
   * What must follow the COMMIT (`engine.in(tx)`'s runs and wake-ups) runs once it committed.
   */
  transaction<T>(work: (tx: TransactionSql) => Promise<T>): Promise<T> {
    return withTransaction(this.pool, (tx) => work(new TransactionSql(tx)));
  }

  /** The pool's counters now: connections open, idle, and clients waiting for one (the metrics read them at scrape time). */
  connections(): { readonly total: number; readonly idle: number; readonly waiting: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  /**
   * Runs `work` on one connection, outside a transaction: reads sent together share one wait for
   * a connection and go out in one round trip (decision 052).
   */
  connection<T>(work: (db: Sql) => Promise<T>): Promise<T> {
    return withConnection(this.pool, (client) => work(new Sql(client)));
  }
}

/**
 * The statements of one transaction. It is the engine's `Transaction` too: `engine.in(tx)` hands
 * it what must follow the COMMIT, and the statements it sends unanswered go with COMMIT behind them.
 */
export class TransactionSql extends Sql implements Transaction {
  constructor(private readonly tx: Transaction) {
    super(tx);
  }

  /**
   * Sends a write without waiting for its answer: COMMIT goes right behind it (one round trip
   * fewer before the caller's answer), and its failure fails the transaction with its own error.
   * For a transaction's last writes, whose results nobody reads.
   */
  send(statement: Statement, params: readonly unknown[] = []): void {
    this.tx.commitBehind(this.run(statement, params));
  }

  afterCommit(work: () => void): void {
    this.tx.afterCommit(work);
  }

  commitBehind(sent: Promise<unknown>): void {
    this.tx.commitBehind(sent);
  }
}

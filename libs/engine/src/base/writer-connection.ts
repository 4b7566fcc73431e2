import type { Client, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { PreparedClient } from './prepared-client';
import type { Queryable } from './ports';

/**
 * One connection of the node's own for one writer (the event writes of running phases, decision
 * 053), so its statements never wait for a pooled connection behind requests and transactions.
 * It connects when its node starts (or at its first statement) and again after its connection failed: a statement on a
 * connection that failed throws, and the caller retries as it would a pool's failure (CALL-06).
 * It pipelines (decision 052): statements issued side by side go out together.
 */
export class WriterConnection implements Queryable {
  private client: Promise<Client> | null = null;
  private closed = false;

  constructor(
    private readonly connectionString: string,
    private readonly applicationName: string,
  ) {}

  async query<R extends QueryResultRow = QueryResultRow>(config: QueryConfig | string, values?: unknown[]): Promise<QueryResult<R>> {
    const client = await this.connected();
    return client.query<R>(config as QueryConfig, values);
  }

  /** Connects ahead of the first statement, so that one does not wait for the handshake. */
  async open(): Promise<void> {
    await this.connected();
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    if (client !== null) await client.then((c) => c.end()).catch(() => undefined);
  }

  private connected(): Promise<Client> {
    if (this.closed) return Promise.reject(new Error('the writer connection is closed'));
    if (this.client !== null) return this.client;
    const client = new PreparedClient({ connectionString: this.connectionString, application_name: this.applicationName, pipeline: true });
    const forget = (): void => {
      if (this.client === connecting) this.client = null;
    };
    // A failed connection is dropped at once; the next statement connects again.
    client.on('error', forget);
    client.once('end', forget);
    const connecting = client.connect().then(
      () => client,
      (error: unknown) => {
        forget();
        throw error;
      },
    );
    this.client = connecting;
    return connecting;
  }
}

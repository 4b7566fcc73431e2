import { Client, Query, type FieldDef, type QueryResult } from 'pg';
import { prepareValue } from 'pg/lib/utils';

/** What pg's protocol layer hands a query: the connection it writes to (the parts used here). */
interface Connection {
  readonly stream: { cork(): void; uncork(): void };
  readonly parsedStatements: Record<string, string | undefined>;
  readonly submittedNamedStatements: Record<string, string | undefined>;
  parse(message: { text: string; name: string; types?: number[] }): void;
  bind(message: { portal: string; statement: string; values: unknown[]; binary: boolean }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string; rows?: number }): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

/** A statement's result columns on one connection: the fields and their text parsers. */
interface RowShape {
  readonly fields: FieldDef[];
  readonly parsers: Array<(value: string) => unknown>;
}

type Callback = (error: Error | null, result?: QueryResult) => void;

/** The result shapes each connection learned, by statement name (a connection lives as long as its client). */
const shapesByConnection = new WeakMap<Connection, Map<string, RowShape>>();

/** `UPDATE 3`, `INSERT 0 1`, `SELECT 2`: the command and the row count, as pg's Result reads them. */
const COMMAND_TAG = /^([A-Za-z]+)(?: (\d+))?(?: (\d+))?/;

/**
 * One run of a named statement (decision 062). pg's own Query asks for the portal's row
 * description on every run and builds its row template again from it; this one asks once per
 * statement and connection, when it learns the statement's shape, and then sends only Bind,
 * Execute and Sync. Rows are built the same way (one object per row, columns in order, pg's type
 * parsers), so callers see the same result.
 *
 * It takes pg's Query prototype without its constructor: a pipelining client accepts only its own
 * query class, and the constructor's emitter and result template are what this saves.
 */
class NamedRun {
  /** Not `rows`: pg's client refuses a query with a `rows` member on a pipelining connection. */
  private readonly collected: Record<string, unknown>[] = [];
  private shape: RowShape | undefined;
  /** The connection's shapes, while this run asks for its statement's shape: kept there once the run completes. */
  private learningInto: Map<string, RowShape> | null = null;
  private failure: Error | null = null;
  private commandTag: string | null = null;
  private settled = false;

  constructor(
    readonly name: string,
    readonly text: string,
    private readonly values: readonly unknown[],
    private readonly client: Client,
    public callback: Callback,
  ) {}

  /** Called by the client when it writes the run; an error returned here fails it unsent. */
  submit(connection: Connection): Error | null {
    const previous = connection.parsedStatements[this.name] ?? connection.submittedNamedStatements[this.name];
    if (previous !== undefined && previous !== this.text) return new Error(`Prepared statements must be unique - '${this.name}' was used for a different statement`);
    let values: unknown[];
    try {
      // Mapped before anything is written: a value that cannot be sent fails this run alone.
      values = this.values.map((value) => prepareValue(value));
    } catch (error) {
      return error as Error;
    }
    let shapes = shapesByConnection.get(connection);
    if (shapes === undefined) shapesByConnection.set(connection, (shapes = new Map()));
    this.shape = shapes.get(this.name);
    connection.stream.cork();
    try {
      if (previous === undefined) {
        connection.parse({ text: this.text, name: this.name });
        connection.submittedNamedStatements[this.name] = this.text;
      }
      connection.bind({ portal: '', statement: this.name, values, binary: false });
      if (this.shape === undefined) {
        connection.describe({ type: 'P', name: '' });
        // A statement without result columns answers NoData: its shape is empty.
        this.learningInto = shapes;
        this.shape = { fields: [], parsers: [] };
      }
      connection.execute({ portal: '', rows: undefined });
      connection.sync();
    } finally {
      connection.stream.uncork();
    }
    return null;
  }

  handleRowDescription(message: { fields: FieldDef[] }): void {
    this.shape = { fields: message.fields, parsers: message.fields.map((field) => this.client.getTypeParser(field.dataTypeID, 'text') as (value: string) => unknown) };
  }

  handleDataRow(message: { fields: Array<string | null> }): void {
    if (this.failure !== null) return;
    const { fields, parsers } = this.shape!;
    const values = message.fields;
    const row: Record<string, unknown> = {};
    try {
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        row[fields[i]!.name] = value === null ? null : parsers[i]!(value!);
      }
    } catch (error) {
      this.failure = error as Error;
      return;
    }
    this.collected.push(row);
  }

  handleCommandComplete(message: { text: string }): void {
    this.commandTag = message.text;
    if (this.learningInto !== null) this.learningInto.set(this.name, this.shape!);
  }

  handleEmptyQuery(): void {}

  handlePortalSuspended(): void {}

  handleCopyInResponse(connection: Connection): void {
    connection.sendCopyFail('No source stream defined');
  }

  handleCopyData(): void {}

  handleError(error: Error): void {
    this.settle(this.failure ?? error);
  }

  handleReadyForQuery(): void {
    if (this.failure !== null) return this.settle(this.failure);
    const match = COMMAND_TAG.exec(this.commandTag ?? '');
    const result = {
      command: match?.[1] ?? '',
      rowCount: match?.[3] !== undefined ? Number(match[3]) : match?.[2] !== undefined ? Number(match[2]) : null,
      oid: match?.[3] !== undefined ? Number(match[2]) : null,
      fields: this.shape?.fields ?? [],
      rows: this.collected,
    };
    this.settle(null, result as QueryResult);
  }

  private settle(error: Error | null, result?: QueryResult): void {
    if (this.settled) return;
    this.settled = true;
    this.callback(error, result);
  }
}
Object.setPrototypeOf(NamedRun.prototype, Query.prototype);

/**
 * The node's pg client (decision 062): a named statement given as plain `{ name, text, values }`
 * runs as a NamedRun, without the per-run row description; anything else (plain text, row
 * modes, custom types, cursors) goes to pg unchanged. Its `query` keeps pg's signatures.
 */
export class PreparedClient extends Client {}

const clientQuery = Client.prototype.query as (this: Client, ...args: unknown[]) => unknown;

function preparedQuery(this: Client, config: unknown, values?: unknown, callback?: unknown): unknown {
  if (!isPlainNamed(config) || (this as Client & { binary?: boolean }).binary === true) return clientQuery.call(this, config, values, callback);
  const runValues = config.values ?? (Array.isArray(values) ? (values as unknown[]) : []);
  const done = typeof values === 'function' ? (values as Callback) : typeof callback === 'function' ? (callback as Callback) : undefined;
  if (done !== undefined) {
    clientQuery.call(this, new NamedRun(config.name, config.text, runValues, this, done));
    return undefined;
  }
  return new Promise<QueryResult>((resolve, reject) => {
    clientQuery.call(this, new NamedRun(config.name, config.text, runValues, this, (error, result) => (error === null ? resolve(result!) : reject(error))));
  }).catch((error: unknown) => {
    // As pg does: the stack then leads back to the awaiting caller, not to the socket's read.
    if (error instanceof Error) Error.captureStackTrace(error);
    throw error;
  });
}
PreparedClient.prototype.query = preparedQuery as Client['query'];

interface PlainNamed {
  readonly name: string;
  readonly text: string;
  readonly values?: unknown[];
}

function isPlainNamed(config: unknown): config is PlainNamed {
  if (config === null || typeof config !== 'object') return false;
  const c = config as Record<string, unknown>;
  return (
    typeof c.name === 'string' &&
    c.name !== '' &&
    typeof c.text === 'string' &&
    c.submit === undefined &&
    c.rowMode === undefined &&
    c.types === undefined &&
    c.rows === undefined &&
    c.binary === undefined &&
    c.queryMode === undefined &&
    c.callback === undefined &&
    (c.values === undefined || Array.isArray(c.values))
  );
}

import type { QueryResult } from 'pg';
import type { Queryable } from '../base/ports';

/**
 * A named prepared statement of the engine (docs/architecture.md: the hot path avoids ORM
 * overhead). node-pg prepares a name once per connection and refuses the same name with another
 * text, so every `engine.*` name is defined exactly once, in one of the role modules of this
 * folder (test/repo/engine-sql.spec.ts). Callers spread it: `db.query({ ...s, values })`.
 */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/** The final states as an SQL list: an execution in one of them never changes state again. */
export const FINAL_STATES = `('completed', 'failed', 'cancelled', 'interrupted')`;

/** Runs a feature's statement: plain text, or a named one prepared once per connection. */
export function runStatement(db: Queryable, sql: string | Statement, values: unknown[]): Promise<QueryResult> {
  return typeof sql === 'string' ? db.query(sql, values) : db.query({ ...sql, values });
}

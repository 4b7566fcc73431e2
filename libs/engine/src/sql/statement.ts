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

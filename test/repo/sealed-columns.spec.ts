import { SEALED_COLUMNS } from '@openbot/features';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

/**
 * `openbot rekey` reseals the columns SEALED_COLUMNS lists (decision 071): a sealed column it
 * does not know would keep its old key forever, and dropping that key would lose its data. So
 * every `bytea` column and every `*key_id` column of the migrated schema must either be listed
 * there or be named below as something else, with the reason.
 */
const NOT_SEALED: Record<string, string> = {
  'api_keys.secret_hash': 'a SHA-256 of the key secret, not keyed by the master key',
  'chat_commands.input_hash': 'an idempotency hash of the request body',
  'credit_entries.input_hash': 'an idempotency hash of the request body',
  'execution_commands.input_hash': 'an idempotency hash of the command input',
  'sessions.token_hash': 'a SHA-256 of the session token',
  'sso_logins.state_hash': 'a SHA-256 of the login state',
  'sso_logins.browser_hash': 'a SHA-256 of the browser binding',
  'app_oauth_authorizations.state_hash': 'a SHA-256 of the authorization state',
  'app_oauth_authorizations.browser_hash': 'a SHA-256 of the binding cookie of the browser that started the sign-in',
  'memory_items.words_key_id': 'the key of the memory word index: rekey rebuilds the index under the current key (rekeyMemoryItems)',
};

describe('sealed columns', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('every bytea and key-ID column of the schema is a sealed column rekey reseals, or named as not sealed', async () => {
    const columns = await database.query<{ name: string }>(
      `SELECT table_name || '.' || column_name AS name FROM information_schema.columns
        WHERE table_schema = 'public' AND (data_type = 'bytea' OR column_name LIKE '%key\\_id') ORDER BY 1`,
    );
    const listed = new Set(SEALED_COLUMNS.flatMap((c) => [`${c.table}.${c.dataColumn}`, `${c.table}.${c.keyIdColumn}`]));
    const unknown = columns.map((c) => c.name).filter((name) => !listed.has(name) && NOT_SEALED[name] === undefined);
    expect(unknown).toEqual([]);
    // The list names real columns only.
    const present = new Set(columns.map((c) => c.name));
    expect([...listed, ...Object.keys(NOT_SEALED)].filter((name) => !present.has(name))).toEqual([]);
  });
});

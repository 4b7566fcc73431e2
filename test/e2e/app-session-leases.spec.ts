import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { startSdkServer, type RunningSdkServer, type TestTool } from '../fakes/mcp-test-servers';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { createTestDatabase } from '../support/test-database';
import { waitForExecutionState } from '../support/tool-probes';

/**
 * The lease of a physical scope (RES-06): a legacy MCP session is one row of
 * `app_connection_scopes` with its own lease, renewed by the node that holds it. The owner
 * closes its session when its lease is lost or cannot be checked; a close result lives on the
 * row, where everyone else reads it; a close whose result was not saved is not proven, so the
 * connection's cleanup closes the scope again. Unused sessions never close by idleness here
 * (an hour), so every close these tests see comes from the lease.
 */
describe('App session leases', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let server: RunningSdkServer;
  const note: TestTool = { name: 'note', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, handler: async (args) => ({ text: `noted ${String(args.text)}` }) };

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_APP_SESSION_IDLE_SECONDS: '3600', OPENBOT_LEASE_SECONDS: '2' } });
    fake = await FakeOpenAiServer.start();
  });
  beforeEach(async () => {
    server = await startSdkServer({ era: 'legacy', tools: () => [note] });
  });
  afterEach(async () => server.close());
  afterAll(async () => {
    await fake?.close();
    await t?.close();
  });

  const post = (secret: string, path: string, body: unknown, on: TestApp = t) => on.http().post(path).set('authorization', bearer(secret)).send(body as object);
  const scopes = (connectionId: string, on: TestApp = t) =>
    on.database.query<{ id: string; session_id: string | null; close_result: Record<string, unknown> | null }>(
      'SELECT id, session_id, close_result FROM app_connection_scopes WHERE connection_id = $1 ORDER BY opened_at',
      [connectionId],
    );
  /** The DELETEs of one session (setting a connection up opens and ends short sessions of its own). */
  const deletes = (sessionId: string): number => server.requests.filter((r) => r.method === 'DELETE' && r.sessionId === sessionId).length;

  async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** A Chat whose Turn called the App once and left its session open on this node. */
  async function openSession(on: TestApp = t): Promise<ChatFixture & { connectionId: string; scope: { id: string; session_id: string } }> {
    const chat = await createChatFixture(on, { baseUrl: fake.baseUrl });
    const app = (await post(chat.secret, '/v1/apps', { url: server.url }, on).expect(201)).body as { id: string };
    const connection = (await post(chat.secret, `/v1/apps/${app.id}/connections`, {}, on).expect(201)).body as { id: string };
    await on.http().patch(`/v1/bots/${chat.botId}`).set('authorization', bearer(chat.secret)).send({ tools: [{ kind: 'app', connectionId: connection.id, tools: ['note'] }] }).expect(200);
    fake.enqueue(toolCallReply('c1', 'note', ['{"text":"a"}']), textReply(['Noted.']));
    const admitted = await sendMessage(on, chat.secret, chat.chatId, 'Note it');
    expect((await eventsUntilEnd(on, chat.secret, admitted.executionId)).at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    const [scope, ...others] = await scopes(connection.id, on);
    expect(others).toEqual([]);
    expect(scope).toMatchObject({ session_id: expect.any(String), close_result: null });
    expect(server.openSessions()).toBe(1);
    return { ...chat, connectionId: connection.id, scope: scope as { id: string; session_id: string } };
  }

  it('[RES-06] lease loss: a scope whose row another party closed is not renewed, and its owner ends its session (DELETE) without overwriting the close result the row keeps', async () => {
    const chat = await openSession();
    // Another party (a cleanup that found the lease run out) recorded its own close result.
    await t.database.query(`UPDATE app_connection_scopes SET closed_at = now(), close_result = '{"kind":"local","by":"another party"}' WHERE id = $1`, [chat.scope.id]);
    await until(async () => (deletes(chat.scope.session_id) > 0 ? true : undefined), 'the owner to end its session');
    expect(deletes(chat.scope.session_id)).toBe(1);
    expect(server.openSessions()).toBe(0);
    // The row keeps the close result it had: the owner's own close wrote nothing over it.
    expect((await scopes(chat.connectionId))[0]!.close_result).toEqual({ kind: 'local', by: 'another party' });
  });

  it('[RES-06] an owner that cannot check its lease closes its session; its unsaved close result proves nothing, so the cleanup closes the scope again and keeps that result', async () => {
    const chat = await openSession();
    // Every write to the scope rows fails from now on, as when the database refuses the lease
    // renewal; a sequence (not rolled back with the refused statement) counts the refusals.
    await t.database.query('CREATE SEQUENCE test_scope_refusals');
    await t.database.query(`CREATE FUNCTION test_refuse_scope_writes() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM nextval('test_scope_refusals'); RAISE EXCEPTION 'scope write refused by the test'; END $$`);
    await t.database.query('CREATE TRIGGER test_refuse_scope_writes BEFORE UPDATE ON app_connection_scopes FOR EACH ROW EXECUTE FUNCTION test_refuse_scope_writes()');
    try {
      await until(async () => (deletes(chat.scope.session_id) > 0 ? true : undefined), 'the owner to end its session');
      expect(server.openSessions()).toBe(0);
      // The renewal was refused before the close (the close result write is refused too).
      const [refusals] = await t.database.query<{ n: string }>('SELECT last_value AS n FROM test_scope_refusals');
      expect(Number(refusals!.n)).toBeGreaterThanOrEqual(1);
    } finally {
      await t.database.query('DROP TRIGGER test_refuse_scope_writes ON app_connection_scopes');
      await t.database.query('DROP FUNCTION test_refuse_scope_writes()');
      await t.database.query('DROP SEQUENCE test_scope_refusals');
    }
    // No close result was saved: the scope is still open as far as anyone else can tell.
    expect((await scopes(chat.connectionId))[0]!.close_result).toBeNull();
    // Deleting the connection: its cleanup waits for the lease to run out, ends the session again
    // (the server no longer knows it), keeps that close result, and only then removes the connection.
    const deleted = await t.http().delete(`/v1/connections/${chat.connectionId}`).set('authorization', bearer(chat.secret)).expect(202);
    const cleanup = (deleted.body as { executionId: string }).executionId;
    await until(async () => ((await scopes(chat.connectionId))[0]?.close_result ? true : undefined), 'the cleanup to keep a close result', 30_000);
    expect((await scopes(chat.connectionId))[0]!.close_result).toMatchObject({ kind: expect.stringMatching(/^(already_closed|deleted)$/) });
    expect(deletes(chat.scope.session_id)).toBe(2);
    await waitForExecutionState(t, chat.secret, cleanup, 'completed', 30_000);
    expect(await t.database.query('SELECT 1 FROM app_connections WHERE id = $1', [chat.connectionId])).toEqual([]);
  });
  it('[RES-06] a failed close keeps its error ID after the owner stops: the scope has no close result (not proven released, left to the cleanup) and names the sealed error record of the failed DELETE', async () => {
    // The owner is a node of its own that stops in this test, on a database the test keeps.
    const database = await createTestDatabase();
    const owner = await startTestApp({ database, env: { OPENBOT_APP_SESSION_IDLE_SECONDS: '3600', OPENBOT_LEASE_SECONDS: '2' } });
    try {
      const chat = await openSession(owner);
      // The server goes away: the owner's DELETE cannot reach it, and nothing proves the session ended.
      await server.close();
      server = await startSdkServer({ era: 'legacy', tools: () => [note] });
      await owner.close();
      const [scope] = await database.query<{ closed_at: Date | null; close_result: unknown; close_error_id: string | null }>(
        'SELECT closed_at, close_result, close_error_id FROM app_connection_scopes WHERE id = $1',
        [chat.scope.id],
      );
      expect(scope).toEqual({ closed_at: null, close_result: null, close_error_id: expect.any(String) });
      // The ID names the failure's record, its cause sealed: readable with the owner gone.
      const records = await database.query<{ category: string; origin: string; sealed: boolean }>(
        'SELECT e.category, e.origin, s.id IS NOT NULL AS sealed FROM error_records e LEFT JOIN sealed_records s ON s.id = e.cause_id WHERE e.id = $1',
        [scope!.close_error_id],
      );
      expect(records).toEqual([{ category: expect.any(String), origin: expect.stringMatching(/^app-session-close:/), sealed: true }]);
    } finally {
      await database.drop();
    }
  });
});

import { chunks, FakeOpenAiServer, streamReply, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { startSdkServer, type RunningSdkServer, type TestTool } from '../fakes/mcp-test-servers';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';

/**
 * MCP sessions as physical scopes (RES-01, RES-07): a legacy SDK McpServer (Mcp-Session-Id,
 * DELETE) on loopback. Calls of one connection share one open session, across steps and Turns;
 * the node renews its lease, closes it with DELETE when it stays unused or its connection is
 * deleted, and drops a session that failed under a call (the call ends per its safety, the next
 * call opens a new session).
 */
describe('App sessions (legacy Streamable HTTP)', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let server: RunningSdkServer;
  let tools: TestTool[];
  let notes = 0;
  let drop: 'none' | 'once' = 'none';
  const note: TestTool = {
    name: 'note',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    handler: async (args) => {
      notes += 1;
      return { text: `noted ${String(args.text)}` };
    },
  };
  /** A tool whose server forgets every session and drops the connection while the call runs (once). */
  const dropping = (name: string, annotations?: Record<string, boolean>): TestTool => ({
    name,
    inputSchema: { type: 'object' },
    ...(annotations ? { annotations } : {}),
    handler: async () => {
      notes += 1;
      if (drop === 'once') {
        drop = 'none';
        server.dropSessions();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return { text: `${name} done` };
    },
  });

  beforeAll(async () => {
    // A lost answer counts after 3 s; leases of 2 s are renewed every ~0.7 s. An unused session closes after 10 s:
    // long enough that a test which reads a session still open after its Turn ends (or reuses it in the next Turn)
    // never races the idle close on a loaded CI host, short enough for the test that waits for that close.
    t = await startTestApp({ env: { OPENBOT_APP_CALL_TIMEOUT: '3', OPENBOT_APP_SESSION_IDLE_SECONDS: '10', OPENBOT_LEASE_SECONDS: '2' } });
    fake = await FakeOpenAiServer.start();
  });
  beforeEach(async () => {
    notes = 0;
    drop = 'none';
    tools = [note, dropping('write_once'), dropping('peek', { readOnlyHint: true })];
    server = await startSdkServer({ era: 'legacy', tools: () => tools });
  });
  afterEach(async () => server.close());
  afterAll(async () => {
    await fake?.close();
    await t?.close();
  });

  const post = (secret: string, path: string, body: unknown) => t.http().post(path).set('authorization', bearer(secret)).send(body as object);

  async function appChat(names: string[]): Promise<ChatFixture & { connectionId: string }> {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const app = (await post(chat.secret, '/v1/apps', { url: server.url }).expect(201)).body as { id: string };
    const connection = (await post(chat.secret, `/v1/apps/${app.id}/connections`, {}).expect(201)).body as { id: string };
    await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', bearer(chat.secret)).send({ tools: [{ kind: 'app', connectionId: connection.id, tools: names }] }).expect(200);
    return { ...chat, connectionId: connection.id };
  }

  const scopes = (connectionId: string) =>
    t.database.query<{ id: string; session_id: string | null; lease_until: Date; close_result: { kind: string } | null }>(
      'SELECT id, session_id, lease_until, close_result FROM app_connection_scopes WHERE connection_id = $1 ORDER BY opened_at',
      [connectionId],
    );
  const callSessions = (from = 0): Array<string | null> => server.requests.slice(from).filter((r) => r.rpc === 'tools/call').map((r) => r.sessionId);

  async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('[RES-07] calls of one connection reuse one open session across steps and Turns; its lease is renewed; unused, it is closed with DELETE and its close result kept', async () => {
    const chat = await appChat(['note']);
    const from = server.requests.length;
    fake.enqueue(toolCallReply('c1', 'note', ['{"text":"a"}']), toolCallReply('c2', 'note', ['{"text":"b"}']), textReply(['Noted twice.']));
    const first = await sendMessage(t, chat.secret, chat.chatId, 'Note two things');
    expect((await eventsUntilEnd(t, chat.secret, first.executionId)).at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    fake.enqueue(toolCallReply('c3', 'note', ['{"text":"c"}']), textReply(['Noted again.']));
    const second = await sendMessage(t, chat.secret, chat.chatId, 'One more');
    expect((await eventsUntilEnd(t, chat.secret, second.executionId)).at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(notes).toBe(3);

    // One initialize for three calls in two Turns, all on the one session.
    const seen = server.requests.slice(from);
    expect(seen.filter((r) => r.rpc === 'initialize')).toHaveLength(1);
    const sessions = callSessions(from);
    expect(sessions).toHaveLength(3);
    expect(new Set(sessions).size).toBe(1);
    expect(sessions[0]).toEqual(expect.any(String));
    const [scope, ...others] = await scopes(chat.connectionId);
    expect(others).toEqual([]);
    expect(scope).toMatchObject({ session_id: sessions[0], close_result: null });

    // The owner renews the lease of its open scope.
    const leased = scope!.lease_until.getTime();
    await until(async () => ((await scopes(chat.connectionId))[0]!.lease_until.getTime() > leased ? true : undefined), 'the scope lease renewed');

    // Unused for the idle time, the session is ended with DELETE and the close result stored (RES-06).
    await until(async () => ((await scopes(chat.connectionId))[0]!.close_result !== null ? true : undefined), 'the idle scope closed', 30_000);
    expect((await scopes(chat.connectionId))[0]!.close_result).toEqual({ kind: 'deleted', sessionId: sessions[0] });
    expect(server.requests.slice(from).filter((r) => r.method === 'DELETE').map((r) => r.sessionId)).toEqual([sessions[0]]);
    expect(server.openSessions()).toBe(0);
  });

  it('[RES-01] a phase releases its session before it waits: while the Turn waits for a client tool of the same step, the unused session is closed with DELETE', async () => {
    const chat = await appChat(['note']);
    await t
      .http()
      .patch(`/v1/bots/${chat.botId}`)
      .set('authorization', bearer(chat.secret))
      .send({ tools: [{ kind: 'app', connectionId: chat.connectionId, tools: ['note'] }, { kind: 'client', name: 'ask_user', description: 'Ask the user', parameters: { type: 'object' } }] })
      .expect(200);
    const from = server.requests.length;
    // One step, two calls: the App call runs, the client call makes the Turn wait (no output is ever posted).
    fake.enqueue(
      streamReply([
        chunks.role(),
        chunks.toolCallStart(0, 'c1', 'note'),
        chunks.toolCallArgs(0, '{"text":"a"}'),
        chunks.toolCallStart(1, 'c2', 'ask_user'),
        chunks.toolCallArgs(1, '{}'),
        chunks.finish('tool_calls'),
      ]),
    );
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Note it, then ask');
    await waitForExecutionState(t, chat.secret, admitted.executionId, 'waiting', 20_000);
    expect(notes).toBe(1);
    const [session] = callSessions(from);
    await until(async () => ((await scopes(chat.connectionId))[0]?.close_result ? true : undefined), 'the session closed while the Turn waits');
    expect((await scopes(chat.connectionId))[0]!.close_result).toEqual({ kind: 'deleted', sessionId: session });
    expect((await t.http().get(`/v1/executions/${admitted.executionId}`).set('authorization', bearer(chat.secret)).expect(200)).body).toMatchObject({ state: 'waiting' });
    await t.http().post(`/v1/chats/${chat.chatId}/stop`).set('authorization', bearer(chat.secret)).send({});
  });

  it('[RES-07] [RES-06] deleting a connection ends the open session of the node that holds it (DELETE); the cleanup, which gets no reply from that node, reads the close result it stored and sends no second DELETE', async () => {
    const chat = await appChat(['note']);
    const from = server.requests.length;
    fake.enqueue(toolCallReply('c1', 'note', ['{"text":"a"}']), textReply(['Noted.']));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Note it');
    await eventsUntilEnd(t, chat.secret, admitted.executionId);
    const [open] = await scopes(chat.connectionId);
    expect(open).toMatchObject({ session_id: expect.any(String), close_result: null });
    const deleted = await t.http().delete(`/v1/connections/${chat.connectionId}`).set('authorization', bearer(chat.secret)).expect(202);
    const cleanup = (deleted.body as { executionId: string }).executionId;
    await waitForExecutionState(t, chat.secret, cleanup, 'completed', 30_000);
    expect(server.requests.slice(from).filter((r) => r.method === 'DELETE').map((r) => r.sessionId)).toEqual([open!.session_id]);
    expect(server.openSessions()).toBe(0);
    // The owner closed it; the cleanup made no close call of its own: it read the stored result (RES-06).
    expect(await t.database.query(`SELECT call_key FROM execution_calls WHERE execution_id = $1 AND call_key LIKE '%close:%'`, [cleanup])).toEqual([]);
  });

  it('[RES-01] a session dropped mid-call: an unsafe call waits in outcome_unknown (sent once), and the next call opens a new session', async () => {
    const chat = await appChat(['write_once', 'note']);
    const from = server.requests.length;
    drop = 'once';
    fake.enqueue(toolCallReply('c1', 'write_once', ['{}']));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Write it');
    await waitForExecutionState(t, chat.secret, admitted.executionId, 'outcome_unknown', 30_000);
    expect(notes).toBe(1);
    expect(callSessions(from)).toHaveLength(1);

    // Another Chat of the same Bot: its call goes out on a new session, never the dropped one.
    const other = (await post(chat.secret, '/v1/chats', { botId: chat.botId }).expect(201)).body as { id: string };
    fake.enqueue(toolCallReply('c2', 'note', ['{"text":"after"}']), textReply(['Noted.']));
    const next = await sendMessage(t, chat.secret, other.id, 'Note it');
    expect((await eventsUntilEnd(t, chat.secret, next.executionId)).at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    const [dropped, fresh] = callSessions(from);
    expect(fresh).toEqual(expect.any(String));
    expect(fresh).not.toBe(dropped);
    expect(server.requests.slice(from).filter((r) => r.rpc === 'initialize')).toHaveLength(2);
  });

  it('[RES-01] a session dropped mid-call of a readOnlyHint tool: the call is repeated on a new session and its answer used', async () => {
    const chat = await appChat(['peek']);
    const from = server.requests.length;
    const start = fake.requests.length;
    drop = 'once';
    fake.enqueue(toolCallReply('c1', 'peek', ['{}']), textReply(['Peeked.']));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Peek');
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId, 60_000);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(notes).toBe(2);
    expect(events.filter((e) => e.type === 'tool.called')).toHaveLength(1);
    const toolMessages = ((fake.requests[start + 1]!.body as { messages: Array<{ role: string; content: string }> }).messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content);
    expect(toolMessages).toEqual(['peek done']);
    const [first, repeat] = callSessions(from);
    expect(repeat).toEqual(expect.any(String));
    expect(repeat).not.toBe(first);
    // The dropped session's scope is closed (the server no longer knew it: 404 counts as closed).
    await until(async () => ((await scopes(chat.connectionId)).some((s) => s.session_id === first && s.close_result !== null) ? true : undefined), 'the dropped scope closed');
    expect((await scopes(chat.connectionId)).find((s) => s.session_id === first)!.close_result).toMatchObject({ kind: 'already_closed', status: 404 });
  });
});

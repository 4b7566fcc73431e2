import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { startSdkServer, startServerEverything, type RunningMcpServer, type RunningSdkServer, type TestTool } from '../fakes/mcp-test-servers';
import { addMember, bearer, createChatFixture, eventsUntilEnd, replyText, sendMessage, type ChatFixture, type EventBody } from '../support/chat-fixture';
import { expectDeclared } from '../support/api-assertions';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';

/**
 * App tools in Turns (STC-07, STC-12, CALL-03): a Bot saves the declarations of its App tools,
 * a Turn's scripted model calls them, and each call sends its saved declaration through the call
 * log, never listing tools again. Real MCP servers on loopback: the reference server-everything
 * (legacy era) and SDK McpServers (stateless 2026-07-28 revision) written in the test.
 */
describe('App tools in Turns', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let everything: RunningMcpServer;

  beforeAll(async () => {
    // A call without an answer counts as lost after 3 s (the outcome_unknown test waits for that).
    t = await startTestApp({ env: { OPENBOT_APP_CALL_TIMEOUT: '3' } });
    fake = await FakeOpenAiServer.start();
    everything = await startServerEverything();
  });
  afterAll(async () => {
    await everything?.close();
    await fake?.close();
    await t?.close();
  });

  const post = (secret: string, path: string, body: unknown) => t.http().post(path).set('authorization', bearer(secret)).send(body as object);

  /** A Chat whose Bot uses the App at `url` (its tools filtered to `tools` when given). */
  async function appChat(url: string, tools?: string[]): Promise<ChatFixture & { connectionId: string }> {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const app = (await post(chat.secret, '/v1/apps', { url }).expect(201)).body as { id: string };
    const connection = (await post(chat.secret, `/v1/apps/${app.id}/connections`, {}).expect(201)).body as { id: string; state: string };
    expect(connection.state).toBe('ready');
    await t
      .http()
      .patch(`/v1/bots/${chat.botId}`)
      .set('authorization', bearer(chat.secret))
      .send({ tools: [{ kind: 'app', connectionId: connection.id, ...(tools ? { tools } : {}) }] })
      .expect(200);
    return { ...chat, connectionId: connection.id };
  }

  const toolMessages = (index: number): string[] =>
    ((fake.requests[index]!.body as { messages: Array<{ role: string; content: string }> }).messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content);
  const modelTools = (index: number): string[] => ((fake.requests[index]!.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((tool) => tool.function.name);

  it('[STC-12] a Turn whose model calls server-everything’s echo and get-sum gets their results and replies', async () => {
    const chat = await appChat(everything.url, ['echo', 'get-sum']);
    const bot = (await t.http().get(`/v1/bots/${chat.botId}`).set('authorization', bearer(chat.secret)).expect(200)).body as { tools: Array<Record<string, unknown>> };
    expect(bot.tools[0]).toMatchObject({ kind: 'app', connectionId: chat.connectionId, tools: ['echo', 'get-sum'], declarations: [{ name: 'echo', serverName: 'echo', revision: 1 }, { name: 'get-sum', serverName: 'get-sum', revision: 1 }] });
    const start = fake.requests.length;
    fake.enqueue(toolCallReply('c1', 'echo', ['{"message":"hi there"}']), toolCallReply('c2', 'get-sum', ['{"a":19,"b":23}']), textReply(['Echoed and summed: 42.']));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Echo and add');
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(replyText(events)).toBe('Echoed and summed: 42.');
    expect(modelTools(start)).toEqual(['echo', 'get-sum']);
    expect(toolMessages(start + 1)).toEqual(['Echo: hi there']);
    expect(toolMessages(start + 2)).toEqual(['Echo: hi there', 'The sum of 19 and 23 is 42.']);
    const called = events.filter((e) => e.type === 'tool.called');
    expect(called.map((e) => e.app)).toEqual([
      { connectionId: chat.connectionId, revision: 1 },
      { connectionId: chat.connectionId, revision: 1 },
    ]);
    // Both calls went out on one session: one physical scope of this node, still open for later calls (RES-07).
    const scopes = await t.database.query<{ session_id: string | null; close_result: unknown }>('SELECT session_id, close_result FROM app_connection_scopes WHERE connection_id = $1', [chat.connectionId]);
    expect(scopes).toEqual([{ session_id: expect.any(String), close_result: null }]);
  });

  it('an app entry reads as its tools in the Bot list and the Bot alike: its declarations with their descriptions, never an empty name, description or parameters', async () => {
    const chat = await appChat(everything.url, ['echo', 'get-sum']);
    const listed = ((await t.http().get('/v1/bots').set('authorization', bearer(chat.secret)).expect(200)).body as { data: Array<{ id: string; tools: Array<Record<string, unknown>> }> }).data.find(
      (b) => b.id === chat.botId,
    )!;
    const one = (await t.http().get(`/v1/bots/${chat.botId}`).set('authorization', bearer(chat.secret)).expect(200)).body as { tools: Array<Record<string, unknown>> };
    for (const tools of [listed.tools, one.tools]) {
      expect(tools).toHaveLength(1);
      expect(Object.keys(tools[0]!).sort()).toEqual(['connectionId', 'declarations', 'kind', 'tools']);
      expect(tools[0]!.declarations).toEqual([
        { name: 'echo', serverName: 'echo', revision: 1, description: expect.stringMatching(/\S/) },
        { name: 'get-sum', serverName: 'get-sum', revision: 1, description: expect.stringMatching(/\S/) },
      ]);
    }
    expect(listed.tools).toEqual(one.tools);
  });

  it("[IDN-08] another organization's connection cannot be named in a Bot's tools (400 on its connectionId)", async () => {
    const mine = await appChat(everything.url, ['echo']);
    const other = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const res = await t.http().patch(`/v1/bots/${other.botId}`).set('authorization', bearer(other.secret)).send({ tools: [{ kind: 'app', connectionId: mine.connectionId }] });
    expectDeclared(res, 400, 'InvalidInput');
    expect((res.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['tools.0.connectionId']);
  });

  it("[IDN-05] a member's own connection serves only that member's work, by HTTP and by tool alike: another member may not name it in a Bot over HTTP, and their Turn with the same Bot gets an error result", async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const app = (await post(chat.secret, '/v1/apps', { url: everything.url }).expect(201)).body as { id: string };
    const alice = await addMember(t, chat.organizationId);
    const bob = await addMember(t, chat.organizationId);
    const own = (await post(alice.secret, `/v1/apps/${app.id}/connections`, { owner: 'member' }).expect(201)).body as { id: string };
    // Bob may not name Alice's connection; Alice may.
    const refused = await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', bearer(bob.secret)).send({ tools: [{ kind: 'app', connectionId: own.id, tools: ['echo'] }] });
    expectDeclared(refused, 400, 'InvalidInput');
    await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', bearer(alice.secret)).send({ tools: [{ kind: 'app', connectionId: own.id, tools: ['echo'] }] }).expect(200);
    const bobsChat = (await post(bob.secret, '/v1/chats', { botId: chat.botId }).expect(201)).body as { id: string };
    const start = fake.requests.length;
    fake.enqueue(toolCallReply('c1', 'echo', ['{"message":"x"}']), textReply(['Not mine.']));
    const admitted = await sendMessage(t, bob.secret, bobsChat.id, 'Echo');
    const events = await eventsUntilEnd(t, bob.secret, admitted.executionId);
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ isError: true, category: 'forbidden', errorId: expect.any(String) });
    expect(toolMessages(start + 1)[0]).toMatch(/another member's own/);
  });

  describe('an SDK McpServer (stateless 2026-07-28 revision)', () => {
    let server: RunningSdkServer;
    let tools: TestTool[];
    let calls = 0;
    let release: () => void = () => undefined;
    const lookup = (schemaExtra: Record<string, unknown> = {}): TestTool => ({
      name: 'lookup',
      inputSchema: { type: 'object', properties: { q: { type: 'string' }, ...schemaExtra }, required: ['q'] },
      handler: async (args) => {
        calls += 1;
        return { text: `found ${String(args.q)}` };
      },
    });
    const hang: TestTool = {
      name: 'write_record',
      inputSchema: { type: 'object' },
      handler: () => {
        calls += 1;
        return new Promise((resolve) => (release = () => resolve({ text: 'late' })));
      },
    };
    beforeEach(async () => {
      calls = 0;
      tools = [lookup(), hang];
      server = await startSdkServer({ era: 'modern', tools: () => tools });
    });
    afterEach(async () => {
      release();
      await server.close();
    });

    it('[STC-12] a tool changed after it was saved: once a check saw the change, the saved call refuses clearly and nothing is sent', async () => {
      const chat = await appChat(server.url, ['lookup']);
      tools = [lookup({ limit: { type: 'integer' } }), hang];
      const check = await post(chat.secret, `/v1/connections/${chat.connectionId}/check`, {}).expect(202);
      await waitForExecutionState(t, chat.secret, (check.body as { executionId: string }).executionId, 'completed');
      const start = fake.requests.length;
      const requestsBefore = server.requests.length;
      fake.enqueue(toolCallReply('c1', 'lookup', ['{"q":"x"}']), textReply(['It changed.']));
      const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Look it up');
      const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
      expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
      const result = events.find((e) => e.type === 'tool.result') as EventBody & { category?: string; errorId?: string };
      expect(result).toMatchObject({ isError: true, category: 'unavailable', errorId: expect.any(String) });
      expect(toolMessages(start + 1)[0]).toMatch(/the tool changed on its server since it was saved \(connection revision 1 → 2\)/);
      expect(calls).toBe(0);
      expect(server.requests.slice(requestsBefore).some((r) => r.rpc === 'tools/call')).toBe(false);
      expect(server.requests.slice(requestsBefore).some((r) => r.rpc === 'tools/list')).toBe(false);
    });

    it('[STC-12] a Turn takes its App tools from the Bot’s saved declarations, never the discovery cache: the cache changes, the model still sees and the call still sends what was saved', async () => {
      const chat = await appChat(server.url, ['lookup']);
      // The cache of the same revision is rewritten: another description and a schema the saved arguments would not fit.
      await t.database.query(
        `UPDATE app_connection_tools SET tools = (SELECT jsonb_agg(CASE WHEN tool->>'name' = 'lookup'
                  THEN tool || '{"description":"FROM THE CACHE","inputSchema":{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}}'::jsonb ELSE tool END)
                  FROM jsonb_array_elements(tools) tool)
          WHERE connection_id = $1`,
        [chat.connectionId],
      );
      const start = fake.requests.length;
      fake.enqueue(toolCallReply('c1', 'lookup', ['{"q":"saved"}']), textReply(['Found.']));
      const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Look it up');
      const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
      expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
      const declared = (fake.requests[start]!.body as { tools: Array<{ function: { name: string; description: string; parameters: Record<string, unknown> } }> }).tools;
      expect(declared).toEqual([{ type: 'function', function: expect.objectContaining({ name: 'lookup', description: 'lookup', parameters: expect.objectContaining({ required: ['q'] }) }) }]);
      expect(toolMessages(start + 1)).toEqual(['found saved']);
      expect(calls).toBe(1);
    });

    it('[STC-12] a tool the server changed without a check: the saved arguments are sent to the saved name only, and the server’s refusal is an error result (its handler never ran)', async () => {
      const chat = await appChat(server.url, ['lookup']);
      tools = [{ ...lookup(), inputSchema: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } }, hang];
      const start = fake.requests.length;
      fake.enqueue(toolCallReply('c1', 'lookup', ['{"q":"x"}']), textReply(['Refused.']));
      const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Look it up');
      const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
      expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ isError: true });
      expect(toolMessages(start + 1)[0]).toMatch(/^Error: .*(validation|invalid)/i);
      expect(calls).toBe(0);
      expect(server.requests.filter((r) => r.rpc === 'tools/call')).toHaveLength(1);
    });

    it("[ERR-01] a server's error text reaches neither the logs nor the model: the call's error result names its category and error ID", async () => {
      const SERVER_TEXT = 'SERVER-TEXT-9f2c-internal-path-/srv/secret';
      const erring = await startSdkServer({
        era: 'modern',
        tools: () => [lookup()],
        // Every tools/call answer becomes a JSON-RPC error carrying the server's own text.
        rewrite: (body) => {
          const erred = (json: string): string => {
            const message = JSON.parse(json) as { id?: unknown; result?: { content?: unknown } };
            if (!Array.isArray(message.result?.content)) return json;
            return JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: SERVER_TEXT, data: { detail: SERVER_TEXT } } });
          };
          if (body.trimStart().startsWith('{')) return erred(body);
          return body.replace(/^data: (.+)$/gm, (_line, json: string) => `data: ${erred(json)}`);
        },
      });
      try {
        const chat = await appChat(erring.url, ['lookup']);
        const start = fake.requests.length;
        fake.enqueue(toolCallReply('c1', 'lookup', ['{"q":"x"}']), textReply(['It failed.']));
        const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Look it up');
        const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
        expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ isError: true, category: 'unavailable', errorId: expect.any(String) });
        expect(erring.requests.filter((r) => r.rpc === 'tools/call')).toHaveLength(1);
        expect(toolMessages(start + 1)[0]).toMatch(/JSON-RPC error -32603/);
        expect(toolMessages(start + 1)[0]).not.toContain(SERVER_TEXT);
        expect(JSON.stringify(events)).not.toContain(SERVER_TEXT);
        // The logs are captured (this file's app writes them), and none carries the server's text.
        expect(t.logs.length).toBeGreaterThan(0);
        expect(t.logs.some((line) => line.includes(SERVER_TEXT))).toBe(false);
      } finally {
        await erring.close();
      }
    });

    it('[CALL-03] an unsafe App tool that never answers waits in outcome_unknown, called once', async () => {
      const chat = await appChat(server.url, ['write_record']);
      fake.enqueue(toolCallReply('c1', 'write_record', ['{}']));
      const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Write it');
      await waitForExecutionState(t, chat.secret, admitted.executionId, 'outcome_unknown', 30_000);
      expect(calls).toBe(1);
    });

    it('[CALL-03] a readOnlyHint App tool whose answer was lost is sent again under the same call, and its second answer is used', async () => {
      let peeks = 0;
      tools = [
        {
          name: 'peek',
          annotations: { readOnlyHint: true },
          inputSchema: { type: 'object' },
          handler: () => {
            peeks += 1;
            return peeks === 1 ? new Promise((resolve) => (release = () => resolve({ text: 'late' }))) : Promise.resolve({ text: 'peeked' });
          },
        },
      ];
      const chat = await appChat(server.url, ['peek']);
      const start = fake.requests.length;
      fake.enqueue(toolCallReply('c1', 'peek', ['{}']), textReply(['Done.']));
      const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Peek');
      const events = await eventsUntilEnd(t, chat.secret, admitted.executionId, 60_000);
      expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
      expect(toolMessages(start + 1)).toEqual(['peeked']);
      expect(peeks).toBe(2);
      expect(events.filter((e) => e.type === 'tool.called')).toHaveLength(1);
    });

    it('MCP progress notifications of an App call become tool.progress events', async () => {
      tools = [
        {
          name: 'crunch',
          inputSchema: { type: 'object' },
          handler: async (_args, extra) => {
            await extra.sendProgress(1, 3, 'one');
            await extra.sendProgress(3, 3);
            return { text: 'crunched' };
          },
        },
      ];
      const chat = await appChat(server.url, ['crunch']);
      fake.enqueue(toolCallReply('c1', 'crunch', ['{}']), textReply(['Done.']));
      const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Crunch');
      const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
      expect(events.filter((e) => e.type === 'tool.progress').map((e) => ({ callId: e.callId, progress: e.progress, total: e.total, message: e.message }))).toEqual([
        { callId: 'c1', progress: 1, total: 3, message: 'one' },
        { callId: 'c1', progress: 3, total: 3, message: undefined },
      ]);
    });

    it('a connection deleted before the call fails that call clearly', async () => {
      const chat = await appChat(server.url, ['lookup']);
      await t.http().delete(`/v1/connections/${chat.connectionId}`).set('authorization', bearer(chat.secret)).expect(202);
      const start = fake.requests.length;
      fake.enqueue(toolCallReply('c1', 'lookup', ['{"q":"x"}']), textReply(['Gone.']));
      const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Look it up');
      const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
      expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
      expect(toolMessages(start + 1)[0]).toMatch(/the connection was deleted/);
      expect(calls).toBe(0);
    });
  });
});

import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chunks, FakeOpenAiServer, heldStreamReply, streamReply, textReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { addMember, bearer, createChatFixture, eventsUntilEnd, sendMessage, waitForEvent, type ChatFixture } from '../support/chat-fixture';
import { runCli } from '../support/cli-runner';
import { openSse, type OpenSse } from '../support/sse-client';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Per-organization limits (decision 076), set low by the operator's variables, replayed as an
 * organization that tries to take more than its share would: over HTTP, on real PostgreSQL.
 * What an organization holds past its limit is 409 LimitReached, what frees by itself is 429
 * RateLimited, each naming the limit; tool calls past the limit get error results.
 */

const LIMITS = {
  OPENBOT_ORG_API_KEYS: '3',
  OPENBOT_ORG_STREAMS: '2',
  OPENBOT_ORG_QUEUED_TURNS_PER_CHAT: '1',
  OPENBOT_ORG_TOOL_CALLS_PER_STEP: '2',
  OPENBOT_ORG_RUNNING_TURNS: '2',
  OPENBOT_ORG_FILE_BYTES: '100',
  OPENBOT_ORG_MEMORY_ITEMS: '2',
};

const PARAMS = { type: 'object', properties: { q: { type: 'string' } } };

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A text reply held open after its first chunk until `release` resolves: the Turn keeps running. */
const heldText = (release: Promise<void>) =>
  heldStreamReply([chunks.role(), chunks.text('held'), chunks.finish('stop'), chunks.usage(5, 2)], { holdAfter: 2, release });

/** One model step asking for `n` calls of `name` at once. */
function manyToolCalls(name: string, n: number) {
  const calls = Array.from({ length: n }, (_, i) => [chunks.toolCallStart(i, `call_${i}`, name), chunks.toolCallArgs(i, `{"q":"${i}"}`)]).flat();
  return streamReply([chunks.role(), ...calls, chunks.finish('tool_calls'), chunks.usage(10, 5)]);
}

/** Polls a condition the server reaches on its own (a released slot), never the clock. */
async function eventually(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`never happened: ${what}`);
}

function expectLimit(res: { status: number; body: unknown }, status: 409 | 429, limit: string, value: number): void {
  const expected = status === 409 ? { type: 'LimitReached', limit, value, message: expect.stringContaining(`\`${limit}\``) } : { type: 'RateLimited', limit, message: expect.stringContaining(`\`${limit}\``) };
  expect({ status: res.status, body: res.body }).toEqual({ status, body: expect.objectContaining(expected) });
}

describe('per-organization limits', () => {
  let t: TestApp;
  let port: number;
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;
  const releases: Array<() => void> = [];
  const streams: OpenSse[] = [];

  beforeAll(async () => {
    t = await startTestApp({ env: LIMITS });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    model = await FakeOpenAiServer.start();
    tools = await FakeToolServer.start();
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    // Held and queued Turns end with an answer before their model server goes away.
    model.fallback = textReply(['ok'], [3, 1]);
    for (const release of releases.splice(0)) release();
    await eventually(async () => (await t.database.query(`SELECT 1 FROM chat_turns WHERE state <> 'ended'`)).length === 0, 'every Turn ended');
    await model.close();
    await tools.close();
  });

  /** A Turn of the fixture's Chat that keeps running until the test ends. */
  async function runningTurn(chat: ChatFixture, chatId = chat.chatId, secret = chat.secret) {
    const release = deferred();
    releases.push(release.resolve);
    model.enqueue(heldText(release.promise));
    const admitted = await sendMessage(t, secret, chatId, 'Hold on');
    expect(admitted.admission).toBe('started');
    await waitForEvent(t, chat.secret, admitted.executionId, 'text.delta');
    // The long polls that waited for it held stream slots: they are freed before the test counts.
    await eventually(async () => (await openStreams(chat.organizationId)) === 0, 'the long polls released their slots');
    return admitted;
  }

  async function openStreams(organizationId: string): Promise<number> {
    const rows = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM event_stream_slots WHERE credential = $1 AND expires_at > now()`, [`organization:${organizationId}`]);
    return rows[0]!.n;
  }

  const newChat = async (chat: ChatFixture): Promise<string> =>
    ((await t.http().post('/v1/chats').set('authorization', bearer(chat.secret)).send({ botId: chat.botId }).expect(201)).body as { id: string }).id;

  it('[PLAT-08] API keys: keys created at the same moment never pass the limit; the next is 409 LimitReached naming apiKeys; a revoked key frees room', async () => {
    const org = await t.createOrganization('Keys');
    const create = (name: string) => t.http().post('/v1/api-keys').set('authorization', bearer(org.secret)).send({ name });
    // The organization holds its owner's key; five more are asked for at once against a limit of 3.
    const answers = await Promise.all(['a', 'b', 'c', 'd', 'e'].map(create));
    const created = answers.filter((r) => r.status === 201);
    expect(created).toHaveLength(2);
    for (const refused of answers.filter((r) => r.status !== 201)) expectLimit(refused, 409, 'apiKeys', 3);
    // A member's first key counts too.
    expectLimit(await t.http().post('/v1/members').set('authorization', bearer(org.secret)).send({ role: 'member', name: 'M' }), 409, 'apiKeys', 3);

    await t.http().delete(`/v1/api-keys/${(created[0]!.body as { id: string }).id}`).set('authorization', bearer(org.secret)).expect(200);
    expect((await create('after revoking')).status).toBe(201);
    expectLimit(await create('one too many'), 409, 'apiKeys', 3);
    // Another organization's keys are its own.
    const other = await t.createOrganization('Other keys');
    expect((await t.http().post('/v1/api-keys').set('authorization', bearer(other.secret)).send({ name: 'x' })).status).toBe(201);
  });

  it("[PLAT-08] streams: the organization's keys together hold at most its limit of open event streams; the next is 429 naming streams", async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl });
    const turn = await runningTurn(chat);
    const second = await addMember(t, chat.organizationId);
    const open = async (secret: string): Promise<OpenSse> => {
      const stream = await openSse(port, `/v1/executions/${turn.executionId}/events`, { authorization: bearer(secret) });
      streams.push(stream);
      return stream;
    };
    expect([(await open(chat.secret)).status, (await open(second.secret)).status]).toEqual([200, 200]);
    // Each key is far below its own cap (OPENBOT_STREAMS_PER_KEY): the organization's limit refuses.
    const refused = await open(second.secret);
    await refused.ended;
    expect({ status: refused.status, retryAfter: refused.headers['retry-after'] }).toEqual({ status: 429, retryAfter: expect.stringMatching(/^[1-9]\d*$/) });
    expect(JSON.parse(refused.text())).toEqual(expect.objectContaining({ type: 'RateLimited', limit: 'streams' }));
    // A closed stream frees its slot for the next.
    streams[0]!.close();
    await eventually(async () => (await openStreams(chat.organizationId)) === 1, 'the closed stream released its slot');
    expect((await open(chat.secret)).status).toBe(200);
  });

  it('[PLAT-08] queued Turns per Chat: input that would queue past the limit is 429 naming queuedTurnsPerChat, and nothing of it is stored', async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl });
    await runningTurn(chat);
    const b = await addMember(t, chat.organizationId);
    const c = await addMember(t, chat.organizationId);
    expect((await sendMessage(t, b.secret, chat.chatId, 'B waits')).admission).toBe('queued');
    const refused = await t.http().post(`/v1/chats/${chat.chatId}/messages`).set('authorization', bearer(c.secret)).send({ content: 'C too' });
    expectLimit(refused, 429, 'queuedTurnsPerChat', 1);
    expect(refused.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    const turns = await t.database.query<{ state: string }>(`SELECT state FROM chat_turns WHERE chat_id = $1 ORDER BY seq`, [chat.chatId]);
    expect(turns.map((row) => row.state)).toEqual(['running', 'queued']);
    // The advancing Turn's own identity still steers it: steering queues nothing.
    expect((await sendMessage(t, chat.secret, chat.chatId, 'and also')).admission).toBe('steered');
  });

  it('[PLAT-08] running Turns: a message that would start a Turn past the limit is 429 naming runningTurns; queueing in a busy Chat is still admitted', async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl });
    const second = await newChat(chat);
    const third = await newChat(chat);
    await runningTurn(chat);
    await runningTurn(chat, second);
    const refused = await t.http().post(`/v1/chats/${third}/messages`).set('authorization', bearer(chat.secret)).send({ content: 'a third at once' });
    expectLimit(refused, 429, 'runningTurns', 2);
    expect(await t.database.query(`SELECT 1 FROM chat_messages WHERE chat_id = $1`, [third])).toEqual([]);
    // Queueing behind a Chat's running Turn starts nothing: admitted at the limit.
    const b = await addMember(t, chat.organizationId);
    expect((await sendMessage(t, b.secret, chat.chatId, 'B waits its turn')).admission).toBe('queued');
    // Another organization runs its own Turns.
    const other = await createChatFixture(t, { baseUrl: model.baseUrl });
    model.fallback = textReply(['fine'], [3, 1]);
    const theirs = await sendMessage(t, other.secret, other.chatId, 'Hi');
    expect((await eventsUntilEnd(t, other.secret, theirs.executionId)).at(-1)).toMatchObject({ state: 'completed' });
  });

  it('[PLAT-08] tool calls per step: a model asking for five calls at once makes the platform send only the limit; the rest get error results naming toolCallsPerStep and the step proceeds', async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [{ name: 'lookup', description: 'Looks up', parameters: PARAMS, kind: 'http', url: tools.url('/lookup') }] });
    tools.fallback = jsonReply(200, { modelOutput: 'found' });
    model.enqueue(manyToolCalls('lookup', 5), textReply(['Done.'], [20, 3]));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Look up five things');
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });

    expect(tools.requests.map((r) => (r.body as { arguments: { q: string } }).arguments.q).sort()).toEqual(['0', '1']);
    expect(events.filter((e) => e.type === 'tool.called').map((e) => e.callId)).toEqual(expect.arrayContaining(['call_0', 'call_1']));
    expect(events.filter((e) => e.type === 'tool.called')).toHaveLength(2);
    const results = events.filter((e) => e.type === 'tool.result');
    expect(results.map((e) => [e.callId, e.isError]).sort()).toEqual([
      ['call_0', false],
      ['call_1', false],
      ['call_2', true],
      ['call_3', true],
      ['call_4', true],
    ]);
    // The next model step read every call's answer: the refused ones name the limit.
    const toolMessages = (model.requests[1]!.body as { messages: Array<{ role: string; tool_call_id?: string; content: string }> }).messages.filter((m) => m.role === 'tool');
    expect(toolMessages.map((m) => [m.tool_call_id, m.content.includes('toolCallsPerStep')])).toEqual([
      ['call_0', false],
      ['call_1', false],
      ['call_2', true],
      ['call_3', true],
      ['call_4', true],
    ]);
  });

  it('[PLAT-08] file bytes: an upload that does not fit is 409 LimitReached naming fileBytes and leaves nothing stored', async () => {
    const org = await t.createOrganization('Files');
    const upload = (bytes: number, name: string) =>
      t.http().post('/v1/files').set('authorization', bearer(org.secret)).attach('file', Buffer.alloc(bytes, 'a'), { filename: name, contentType: 'text/plain' });
    expect((await upload(60, 'first.txt')).status).toBe(201);
    expectLimit(await upload(60, 'second.txt'), 409, 'fileBytes', 100);
    expect((await upload(40, 'fits.txt')).status).toBe(201);
    // Full: refused before a byte is stored.
    expectLimit(await upload(1, 'full.txt'), 409, 'fileBytes', 100);
    const rows = await t.database.query<{ name: string; state: string }>(`SELECT name, state FROM files WHERE organization_id = $1 ORDER BY name`, [org.organizationId]);
    expect(rows).toEqual([
      { name: 'first.txt', state: 'ready' },
      { name: 'fits.txt', state: 'ready' },
    ]);
  });

  it('[PLAT-08] file bytes: uploads racing for the last room never store more than the limit together', async () => {
    const org = await t.createOrganization('Racing files');
    const answers = await Promise.all(
      ['a', 'b', 'c', 'd'].map((name) =>
        t.http().post('/v1/files').set('authorization', bearer(org.secret)).attach('file', Buffer.alloc(40, 'r'), { filename: `${name}.txt`, contentType: 'text/plain' }),
      ),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(2);
    for (const refused of answers.filter((r) => r.status !== 201)) expectLimit(refused, 409, 'fileBytes', 100);
    const stored = await t.database.query<{ bytes: string }>(`SELECT coalesce(sum(bytes), 0)::text AS bytes FROM files WHERE organization_id = $1`, [org.organizationId]);
    expect(stored).toEqual([{ bytes: '80' }]);
  });

  it('[PLAT-08] memory items: items added at the same moment never pass the limit; the next is 409 LimitReached naming memoryItems', async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl });
    const add = (content: string) => t.http().post(`/v1/bots/${chat.botId}/memories`).set('authorization', bearer(chat.secret)).send({ content });
    const answers = await Promise.all(['one', 'two', 'three', 'four'].map(add));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(2);
    for (const refused of answers.filter((r) => r.status !== 201)) expectLimit(refused, 409, 'memoryItems', 2);
    const rows = await t.database.query(`SELECT 1 FROM memory_items WHERE organization_id = $1`, [chat.organizationId]);
    expect(rows).toHaveLength(2);
  });

  it('[PLAT-08] GET /v1/limits shows every limit and what the organization uses now, to any member', async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl });
    await runningTurn(chat);
    await t.http().post(`/v1/bots/${chat.botId}/memories`).set('authorization', bearer(chat.secret)).send({ content: 'remember me' }).expect(201);
    await t.http().post('/v1/files').set('authorization', bearer(chat.secret)).attach('file', Buffer.alloc(30, 'b'), { filename: 'f.txt', contentType: 'text/plain' }).expect(201);
    const viewer = await addMember(t, chat.organizationId, 'viewer');
    const res = await t.http().get('/v1/limits').set('authorization', bearer(viewer.secret));
    expect({ status: res.status, body: res.body as unknown }).toEqual({
      status: 200,
      body: {
        apiKeys: { limit: 3, used: 2 },
        streams: { limit: 2, used: 0 },
        queuedTurnsPerChat: { limit: 1, used: 0 },
        toolCallsPerStep: { limit: 2, used: null },
        runningTurns: { limit: 2, used: 1 },
        fileBytes: { limit: 100, used: 30 },
        memoryItems: { limit: 2, used: 1 },
      },
    });
    expect((await t.http().get('/v1/limits')).status).toBe(401);
  });

  it('[PLAT-08] openbot limits prints each limit with its value and use; a key past the limit reaches the CLI as LimitReached', async () => {
    const org = await t.createOrganization('CLI limits');
    const env = { OPENBOT_URL: `http://127.0.0.1:${port}`, OPENBOT_API_KEY: org.secret, OPENBOT_CONFIG: join(__dirname, 'no-such-config.json') };
    const table = await runCli(['limits'], env);
    expect({ code: table.code, stderr: table.stderr }).toEqual({ code: 0, stderr: '' });
    expect(table.stdout.split('\n').map((line) => line.split(/\s+/).join(' '))).toEqual([
      'LIMIT ALLOWED USED',
      'apiKeys 3 1',
      'streams 2 0',
      'queuedTurnsPerChat 1 0',
      'toolCallsPerStep 2 -',
      'runningTurns 2 0',
      'fileBytes 100 0',
      'memoryItems 2 0',
      '',
    ]);
    const json = await runCli(['limits', '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ apiKeys: { limit: 3, used: 1 }, toolCallsPerStep: { limit: 2, used: null } });
    for (const name of ['k1', 'k2']) expect((await runCli(['keys', 'create', name], env)).code).toBe(0);
    const refused = await runCli(['keys', 'create', 'k3'], env);
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({ code: 2, stderr: expect.stringContaining('LimitReached') });
  });
});

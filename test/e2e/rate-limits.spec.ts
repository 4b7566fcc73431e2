import { Engine } from '@openbot/engine';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/** Rate limits held across nodes by database token buckets (LIM-01). */
describe('rate limits', () => {
  let a: TestApp;
  let b: TestApp;
  let fake: FakeOpenAiServer;
  let tools: FakeToolServer;

  beforeAll(async () => {
    a = await startTestApp();
    // A second node on the same database: its own engine, HTTP server and processes' memory.
    b = await startTestApp({ database: a.database, masterKey: a.config.masterKey });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });
  beforeEach(async () => {
    fake = await FakeOpenAiServer.start();
    tools = await FakeToolServer.start();
  });
  afterEach(async () => {
    await fake.close();
    await tools.close();
  });

  const as = (chat: ChatFixture) => bearer(chat.secret);
  const lookup = () => ({ name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url: tools.url('/lookup'), retry: 'safe' });

  it('[LIM-01] two nodes share one rate limit: the third model call in a minute is refused at admission with 429 RateLimited and Retry-After, on either node', async () => {
    const chat = await createChatFixture(a, { baseUrl: fake.baseUrl });
    fake.fallback = textReply(['ok'], [1, 1]);
    await a.http().post('/v1/rate-limits').set('authorization', as(chat)).send({ scope: { kind: 'organization' }, requestsPerMinute: 2 }).expect(201);
    const second = await b.http().post('/v1/chats').set('authorization', as(chat)).send({ botId: chat.botId }).expect(201);
    const onA = await sendMessage(a, chat.secret, chat.chatId, 'from node A');
    await eventsUntilEnd(a, chat.secret, onA.executionId);
    const onB = await sendMessage(b, chat.secret, (second.body as { id: string }).id, 'from node B');
    await eventsUntilEnd(b, chat.secret, onB.executionId);
    expect(fake.requests).toHaveLength(2);
    for (const node of [a, b]) {
      const refused = await node.http().post(`/v1/chats/${chat.chatId}/messages`).set('authorization', as(chat)).send({ content: 'one too many' });
      expect({ status: refused.status, type: (refused.body as { type: string }).type }).toEqual({ status: 429, type: 'RateLimited' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect(fake.requests).toHaveLength(2);
  });

  it('[LIM-01] mid-Turn a model call whose token bucket is empty waits durably on a timer, announced by model.waiting (not a model.failed), then sends; its confirmed usage corrected the shared bucket', async () => {
    const chat = await createChatFixture(a, { baseUrl: fake.baseUrl, tools: [lookup()] });
    // 6,000 tokens a minute (100 a second): the first answer's confirmed 6,705 tokens overdraw the
    // bucket by about 700, some 7 s of refill, so the second step finds it empty even when the tool
    // call between them is slow on a loaded machine.
    await a.http().post('/v1/rate-limits').set('authorization', as(chat)).send({ scope: { kind: 'bot', id: chat.botId }, tokensPerMinute: 6_000 }).expect(201);
    tools.fallback = jsonReply(200, { modelOutput: 'data' });
    fake.enqueue(toolCallReply('c1', 'lookup', ['{}'], [5, 6_700]), textReply(['after the wait'], [5, 5]));
    const turn = await sendMessage(a, chat.secret, chat.chatId, 'use the bucket up');
    const events = await eventsUntilEnd(a, chat.secret, turn.executionId, 40_000);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(fake.requests).toHaveLength(2);
    expect(((await a.app.get(Engine).result(turn.executionId)) as { stop: string }).stop).toBe('stop');
    // The second model step waited: its first try took nothing and sent nothing, and the next one ran after the timer.
    const calls = await a.database.query<{ status: string }>(
      `SELECT status FROM execution_calls WHERE execution_id = $1 AND kind = 'model' ORDER BY created_at`,
      [turn.executionId],
    );
    expect(calls.map((c) => c.status)).toEqual(['succeeded', 'failed', 'succeeded']);
    // The wait is said as a wait with its reason and end, never as a failed attempt (decision 082).
    expect(events.filter((e) => e.type === 'model.failed')).toEqual([]);
    const waits = events.filter((e) => e.type === 'model.waiting');
    expect(waits).toEqual([expect.objectContaining({ step: 2, attempt: 1, reason: 'rate-limit', until: expect.any(String), retryAfter: expect.any(Number) })]);
    expect(waits[0]!.retryAfter).toBeGreaterThanOrEqual(1);
    expect(new Date(waits[0]!.until as string).toISOString()).toBe(waits[0]!.until);
    // The step that waited starts after its wait: its only model.started comes after model.waiting.
    const types = events.map((e) => (e.type === 'model.started' ? `started:${e.step}` : e.type));
    expect(types.indexOf('started:2')).toBeGreaterThan(types.indexOf('model.waiting'));
  });

  it('[IDN-06] a model call that waited for its rate limit checks the Turn’s identity again before it sends: a key revoked during the wait stops it', async () => {
    const chat = await createChatFixture(a, { baseUrl: fake.baseUrl, tools: [lookup()] });
    await a.http().post('/v1/rate-limits').set('authorization', as(chat)).send({ scope: { kind: 'bot', id: chat.botId }, tokensPerMinute: 6_000 }).expect(201);
    tools.fallback = jsonReply(200, { modelOutput: 'data' });
    // Overdrawn by about 700 tokens (7 s of refill): time enough to revoke during the wait, even on a loaded machine.
    fake.enqueue(toolCallReply('c1', 'lookup', ['{}'], [5, 6_700]), textReply(['never sent'], [5, 5]));
    const turn = await sendMessage(a, chat.secret, chat.chatId, 'wait, then be refused');
    // Revoke the Turn's key while its second call waits for the bucket.
    const waiting = async () =>
      (await a.database.query(`SELECT 1 FROM execution_calls WHERE execution_id = $1 AND kind = 'model' AND status = 'failed'`, [turn.executionId])).length > 0;
    for (let i = 0; i < 400 && !(await waiting()); i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(await waiting()).toBe(true);
    const keys = await a.http().get('/v1/api-keys').set('authorization', as(chat)).expect(200);
    const keyId = (keys.body as { data: Array<{ id: string }> }).data[0]!.id;
    const admin = await a.http().post('/v1/members').set('authorization', as(chat)).send({ role: 'owner' }).expect(201);
    await a.http().delete(`/v1/api-keys/${keyId}`).set('authorization', bearer((admin.body as { apiKey: { secret: string } }).apiKey.secret)).expect(200);
    const events = await eventsUntilEnd(a, (admin.body as { apiKey: { secret: string } }).apiKey.secret, turn.executionId, 40_000);
    expect(events.at(-1)).toMatchObject({ state: 'failed', category: 'forbidden' });
    expect(fake.requests).toHaveLength(1);
  });
});

import { FakeAnthropicServer, textReply as anthropicText } from '../fakes/fake-anthropic-server';
import { chunks, FakeOpenAiServer, heldStreamReply, statusReply, streamReply, textReply } from '../fakes/fake-openai-server';
import { bearer, createChatFixture, eventsUntilEnd, listMessages, replyText, sendMessage, waitForEvent, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Model calls of a Turn: through the ModelRegistry (PLAT-06) and the call log, with retries as
 * new attempts (CALL-02, CALL-04), and one usage record per call (USE-01, USE-02, USE-04).
 */

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

interface UsageBody {
  id: string;
  callId: string;
  executionId: string;
  botId: string | null;
  chatId: string | null;
  turnId: string | null;
  model: string;
  status: string;
  inputTokens: number | null;
  outputTokens: number | null;
  estimatedInputTokens: number | null;
  billedTo: { kind: string; id: string };
}

describe('turn model calls', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let chat: ChatFixture;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    fake = await FakeOpenAiServer.start();
    chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
  });
  afterEach(async () => {
    await fake.close();
  });

  const usage = async (query = ''): Promise<UsageBody[]> => {
    const res = await t.http().get(`/v1/usage${query}`).set('authorization', bearer(chat.secret)).expect(200);
    return (res.body as { data: UsageBody[] }).data;
  };

  it('a Turn whose Bot names a provider that no longer exists ends failed with an error ID, and nothing is sent', async () => {
    const auth = bearer(chat.secret);
    const providers = await t.http().get('/v1/model-providers').set('authorization', auth).expect(200);
    const provider = (providers.body as { data: Array<{ id: string; name: string }> }).data.find((p) => p.name === 'fake')!;
    // The API refuses to delete a provider a Bot names (409 ModelProviderInUse); a row removed beneath it still fails the Turn cleanly.
    const refused = await t.http().delete(`/v1/model-providers/${provider.id}`).set('authorization', auth);
    expect({ status: refused.status, type: (refused.body as { type: string }).type }).toEqual({ status: 409, type: 'ModelProviderInUse' });
    await t.database.query('DELETE FROM model_providers WHERE id = $1', [provider.id]);
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Anyone there?');
    expect(admitted.admission).toBe('started');
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
    expect(events.find((e) => e.type === 'model.started')).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'failed', errorId: expect.any(String) });
    expect(fake.requests).toHaveLength(0);
  });

  it('[CALL-04] a model stream that breaks is asked again as a new attempt with a new model.started; its partial text is never joined to the new one', async () => {
    fake.enqueue(
      streamReply([chunks.role(), chunks.text('Partial '), chunks.text('text'), chunks.finish('stop')], { dropAfter: 3 }),
      textReply(['Complete ', 'answer'], [9, 2]),
    );
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Hi');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    const starts = events.filter((e) => e.type === 'model.started').map((e) => [e.step, e.attempt]);
    expect(starts).toEqual([
      [1, 1],
      [1, 2],
    ]);
    // Attempt 1's text is stored as streamed (how many events it takes depends on when writes were in flight, EVT-01), never joined to attempt 2's.
    expect(events.filter((e) => e.type === 'text.delta' && e.attempt === 1).map((e) => e.text).join('')).toBe('Partial text');
    expect(events.find((e) => e.type === 'model.failed')).toMatchObject({ step: 1, attempt: 1, retrying: true });
    expect(replyText(events)).toBe('Complete answer');
    expect((await listMessages(t, chat.secret, chat.chatId)).filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual(['Complete answer']);
    // CALL-02: both attempts carried the same provider idempotency key.
    const keys = fake.keys();
    expect(keys).toHaveLength(1);
    expect(fake.countByKey(keys[0]!)).toBe(2);
  });

  it('[CALL-02] a rate-limited model call is repeated with the same idempotency key; an invalid request is not repeated and fails the Turn', async () => {
    fake.enqueue(statusReply(429, { error: { message: 'slow down' } }, { 'retry-after': '0' }), textReply(['ok'], [3, 1]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Hi');
    expect((await eventsUntilEnd(t, chat.secret, turn.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    expect(fake.countByKey(fake.keys()[0]!)).toBe(2);

    fake.enqueue(statusReply(400, { error: { message: 'bad request' } }));
    const failing = await sendMessage(t, chat.secret, chat.chatId, 'Again');
    const events = await eventsUntilEnd(t, chat.secret, failing.executionId);
    expect(events.find((e) => e.type === 'model.failed')).toMatchObject({ category: 'invalid-request', retrying: false, detail: { status: 400, code: null, message: 'bad request' } });
    // The Turn fails with the provider's own category, not `internal` (decision 082).
    expect(events.at(-1)).toMatchObject({ state: 'failed', category: 'invalid-request', errorId: expect.any(String), detail: { status: 400, code: null, message: 'bad request' } });
    expect(fake.requests).toHaveLength(3);
  });

  it('[PLAT-06] model calls go through the ModelRegistry: the sealed provider key is opened only for the call and the provider egress is checked again at call time', async () => {
    const keyed = await FakeOpenAiServer.start();
    try {
      const withKey = await createChatFixture(t, { baseUrl: keyed.baseUrl });
      // A second provider with an API key, and a Bot on it.
      const auth = bearer(withKey.secret);
      await t.http().post('/v1/model-providers').set('authorization', auth).send({ name: 'keyed', kind: 'openai-compatible', baseUrl: keyed.baseUrl, apiKey: 'sk-sealed-123' }).expect(201);
      await t.http().patch(`/v1/bots/${withKey.botId}`).set('authorization', auth).send({ model: 'keyed/gpt-test' }).expect(200);
      keyed.enqueue(textReply(['keyed'], [2, 1]));
      const turn = await sendMessage(t, withKey.secret, withKey.chatId, 'Hi');
      expect((await eventsUntilEnd(t, withKey.secret, turn.executionId)).at(-1)).toMatchObject({ state: 'completed' });
      expect(keyed.requests[0]!.headers.authorization).toBe('Bearer sk-sealed-123');
      const plain = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM model_providers WHERE base_url LIKE '%sk-sealed%'`);
      expect(plain[0]!.n).toBe(0);

      // The provider's address changes to one the egress policy refuses: the call is refused, not retried.
      await t.database.query(`UPDATE model_providers SET base_url = 'http://10.255.255.1:9/v1' WHERE organization_id = $1 AND name = 'keyed'`, [withKey.organizationId]);
      const refused = await sendMessage(t, withKey.secret, withKey.chatId, 'Again');
      const events = await eventsUntilEnd(t, withKey.secret, refused.executionId);
      expect(events.find((e) => e.type === 'model.failed')).toMatchObject({ category: 'invalid-request', retrying: false });
      expect(events.at(-1)).toMatchObject({ state: 'failed' });
    } finally {
      await keyed.close();
    }
  });

  it('[PLAT-06] an anthropic provider answers a Turn through the same registry and call log', async () => {
    const anthropic = await FakeAnthropicServer.start();
    try {
      const claude = await createChatFixture(t, { baseUrl: anthropic.baseUrl, kind: 'anthropic' });
      anthropic.enqueue(anthropicText(['Bonjour', ' !'], [11, 3]));
      const turn = await sendMessage(t, claude.secret, claude.chatId, 'Salut');
      const events = await eventsUntilEnd(t, claude.secret, turn.executionId);
      expect(events.at(-1)).toMatchObject({ state: 'completed' });
      expect(replyText(events)).toBe('Bonjour !');
      expect(events.find((e) => e.type === 'model.completed')).toMatchObject({ usage: { inputTokens: 11, outputTokens: 3 } });
      expect(anthropic.requests[0]!.headers['idempotency-key']).toEqual(expect.any(String));
    } finally {
      await anthropic.close();
    }
  });

  it('[USE-01] each model call has one usage record with its billing identity, committed with its result and model.completed', async () => {
    fake.enqueue(streamReply([chunks.role(), chunks.text('x'), chunks.finish('stop')], { dropAfter: 2 }), textReply(['Hello'], [12, 3]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Hi');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    const completed = events.filter((e) => e.type === 'model.completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({ step: 1, attempt: 2, usage: { inputTokens: 12, outputTokens: 3 } });
    // Two attempts, one call: one record, never two charges.
    const records = await usage(`?chatId=${chat.chatId}`);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      executionId: turn.executionId,
      botId: chat.botId,
      chatId: chat.chatId,
      turnId: turn.turnId,
      model: 'fake/gpt-test',
      status: 'confirmed',
      inputTokens: 12,
      outputTokens: 3,
      billedTo: { kind: 'member', id: chat.memberId },
    });
    const calls = await t.database.query<{ id: string; status: string }>(`SELECT id, status FROM execution_calls WHERE execution_id = $1 ORDER BY attempt`, [turn.executionId]);
    expect(calls.map((c) => c.status)).toEqual(['failed', 'succeeded']);
    expect(records[0]!.callId).toBe(calls[1]!.id);
    // A duplicate result for the same call cannot add a second record.
    await expect(
      t.database.query(
        `INSERT INTO usage_records (id, organization_id, scope_kind, scope_id, execution_id, call_id, model, status) VALUES (gen_random_uuid(), $1, 'member', $2, $3, $4, 'x', 'confirmed')`,
        [chat.organizationId, chat.memberId, turn.executionId, calls[1]!.id],
      ),
    ).rejects.toThrow(/usage_records_call_id_key/);
    expect(await usage(`?botId=${chat.botId}`)).toHaveLength(1);
  });

  it('[USE-02] a call whose provider reports no usage stays unknown with its estimate and call ID, never zero; it does not block the next call (USE-04)', async () => {
    fake.enqueue(textReply(['no usage here']), textReply(['next'], [4, 1]));
    const first = await sendMessage(t, chat.secret, chat.chatId, 'Hi there');
    const events = await eventsUntilEnd(t, chat.secret, first.executionId);
    expect(events.find((e) => e.type === 'model.completed')).toMatchObject({ usage: null });
    const second = await sendMessage(t, chat.secret, chat.chatId, 'And now?');
    expect((await eventsUntilEnd(t, chat.secret, second.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    const records = await usage(`?chatId=${chat.chatId}`);
    expect(records.map((r) => [r.status, r.inputTokens, r.outputTokens])).toEqual([
      ['unknown', null, null],
      ['confirmed', 4, 1],
    ]);
    expect(records[0]!.estimatedInputTokens).toBeGreaterThan(0);
    expect(records[0]!.callId).toEqual(expect.any(String));
  });

  it('[PLAT-08] the usage list filters by Bot and Chat, pages, and refuses malformed filters', async () => {
    fake.fallback = textReply(['ok'], [1, 1]);
    for (const content of ['a', 'b', 'c']) {
      const turn = await sendMessage(t, chat.secret, chat.chatId, content);
      await eventsUntilEnd(t, chat.secret, turn.executionId);
    }
    const page1 = await t.http().get(`/v1/usage?chatId=${chat.chatId}&limit=2`).set('authorization', bearer(chat.secret)).expect(200);
    const body1 = page1.body as { data: UsageBody[]; next: string | null };
    expect(body1.data).toHaveLength(2);
    const page2 = await t.http().get(`/v1/usage?chatId=${chat.chatId}&limit=2&after=${body1.next}`).set('authorization', bearer(chat.secret)).expect(200);
    expect((page2.body as { data: UsageBody[]; next: string | null }).data).toHaveLength(1);
    const bad = await t.http().get('/v1/usage?botId=nope').set('authorization', bearer(chat.secret));
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: 'InvalidInput', issues: [{ path: 'botId' }] });
    // Another organization sees none of them.
    const other = await t.createOrganization('Other');
    const theirs = await t.http().get(`/v1/usage?chatId=${chat.chatId}`).set('authorization', bearer(other.secret)).expect(200);
    expect((theirs.body as { data: unknown[] }).data).toEqual([]);
  });

  it('[USE-03] each attempt holds its estimate while it runs; a failed attempt, a result and a cancelled Turn each release their holds', async () => {
    const holds = async (executionId: string) =>
      t.database.query<{ attempt: number; estimated_input_tokens: number; released: boolean }>(
        'SELECT attempt, estimated_input_tokens, released_at IS NOT NULL AS released FROM usage_holds WHERE execution_id = $1 ORDER BY attempt',
        [executionId],
      );
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    fake.enqueue(
      streamReply([chunks.role(), chunks.text('x'), chunks.finish('stop')], { dropAfter: 2 }),
      heldStreamReply([chunks.role(), chunks.text('held '), chunks.text('answer'), chunks.finish('stop'), chunks.usage(8, 2)], { holdAfter: 2, release: held }),
    );
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Hi');
    await waitForEvent(t, chat.secret, turn.executionId, 'model.started');
    await fake.waitForRequests(2);
    await waitFor(async () => (await holds(turn.executionId)).length === 2);
    // Attempt 1 failed and released its hold; attempt 2 is streaming and holds its estimate.
    const during = await holds(turn.executionId);
    expect(during.map((h) => [h.attempt, h.released])).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(during[1]!.estimated_input_tokens).toBeGreaterThan(0);
    release();
    expect((await eventsUntilEnd(t, chat.secret, turn.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    expect((await holds(turn.executionId)).every((h) => h.released)).toBe(true);

    // A Turn stopped mid-stream releases the hold of the call it was making.
    fake.enqueue(heldStreamReply([chunks.role(), chunks.text('never'), chunks.finish('stop')], { holdAfter: 2, release: new Promise(() => undefined) }));
    const stopped = await sendMessage(t, chat.secret, chat.chatId, 'Again');
    await waitForEvent(t, chat.secret, stopped.executionId, 'text.delta');
    expect((await holds(stopped.executionId)).map((h) => h.released)).toEqual([false]);
    await t.http().post(`/v1/chats/${chat.chatId}/stop`).set('authorization', bearer(chat.secret)).expect(202);
    expect((await eventsUntilEnd(t, chat.secret, stopped.executionId)).at(-1)).toMatchObject({ state: 'cancelled' });
    expect((await holds(stopped.executionId)).map((h) => h.released)).toEqual([true]);
  });

  it('[ARCH-07] no Chat runtime is kept: each Turn resolves its own model, so a Bot edit reaches the next Turn while the running one keeps what it started with', async () => {
    const second = await FakeOpenAiServer.start();
    try {
      const auth = bearer(chat.secret);
      await t.http().post('/v1/model-providers').set('authorization', auth).send({ name: 'second', kind: 'openai-compatible', baseUrl: second.baseUrl }).expect(201);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      fake.enqueue(heldStreamReply([chunks.role(), chunks.text('from first'), chunks.finish('stop')], { holdAfter: 2, release: held }));
      second.enqueue(textReply(['from second'], [2, 1]));
      const running = await sendMessage(t, chat.secret, chat.chatId, 'one');
      await waitForEvent(t, chat.secret, running.executionId, 'text.delta');
      await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', auth).send({ model: 'second/other-model', instructions: 'Changed.' }).expect(200);
      release();
      expect(replyText(await eventsUntilEnd(t, chat.secret, running.executionId))).toBe('from first');
      const next = await sendMessage(t, chat.secret, chat.chatId, 'two');
      expect(replyText(await eventsUntilEnd(t, chat.secret, next.executionId))).toBe('from second');
      expect(second.requests[0]!.body).toMatchObject({ model: 'other-model', messages: [{ role: 'system', content: 'Changed.' }, { role: 'user', content: 'one' }, { role: 'assistant', content: 'from first' }, { role: 'user', content: 'two' }] });
      expect(fake.requests).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});

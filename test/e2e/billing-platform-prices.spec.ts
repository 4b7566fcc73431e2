import { Engine } from '@openbot/engine';
import { chunks, FakeOpenAiServer, heldStreamReply, textReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Platform credits are spent only at prices the platform stands behind (issue 44, finding 6;
 * decision 072): each attack replayed over HTTP against a real server and a fake model server
 * that records every request it gets.
 */
describe('billing: platform credits are never spent at price 0', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let tools: FakeToolServer;

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_MODEL_CALL_MAX_TOKENS: '100' } });
  });
  afterAll(async () => {
    await t?.close();
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
  const admin = () => `Bearer ${t.adminToken}`;
  const model = encodeURIComponent('fake/gpt-test');
  const grant = (chat: ChatFixture, amountMicros: number) =>
    t.http().post(`/v1/platform/organizations/${chat.organizationId}/credits`).set('authorization', admin()).send({ amountMicros, reason: 'test credits' }).expect(201);
  const platformPrice = (chat: ChatFixture, input: number, output: number) =>
    t.http().put(`/v1/platform/organizations/${chat.organizationId}/prices/${model}`).set('authorization', admin()).send({ inputPerMillionMicros: input, outputPerMillionMicros: output }).expect(200);
  const usageOf = async (chat: ChatFixture) =>
    (await t.http().get('/v1/usage').set('authorization', as(chat)).expect(200)).body.data as Array<Record<string, unknown>>;
  const ledgerOf = async (chat: ChatFixture) =>
    (await t.http().get('/v1/credits/ledger?limit=200').set('authorization', as(chat)).expect(200)).body.data as Array<{ kind: string; amountMicros: number; usageRecordId: string | null }>;
  const stopOf = async (executionId: string) => ((await t.app.get(Engine).result(executionId)) as { stop: string }).stop;
  const lookup = () => ({ name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url: tools.url('/lookup'), retry: 'safe' });

  it('[USE-01] a price of 0 the organization set before its first grant, even one dated in the future, never prices a call under credits: only the platform’s versions do', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    // Before any credits the owner prices the model at 0, now and from tomorrow on.
    await t.http().put(`/v1/prices/${model}`).set('authorization', as(chat)).send({ inputPerMillionMicros: 0, outputPerMillionMicros: 0 }).expect(200);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    const future = await t.http().put(`/v1/prices/${model}`).set('authorization', as(chat)).send({ inputPerMillionMicros: 0, outputPerMillionMicros: 0, effectiveFrom: tomorrow }).expect(200);
    await grant(chat, 1_000);

    // The organization's own versions do not count: the model has no price, and nothing is sent.
    const refused = await t.http().post(`/v1/chats/${chat.chatId}/messages`).set('authorization', as(chat)).send({ content: 'for free?' });
    expect({ status: refused.status, body: refused.body as unknown }).toEqual({ status: 402, body: { type: 'ModelNotPriced', message: expect.any(String), model: 'fake/gpt-test' } });
    expect(fake.requests).toHaveLength(0);

    const platform = await platformPrice(chat, 1_000_000, 1_000_000);
    // Tomorrow arrives: the organization's future version is now the latest one in force.
    await t.database.query('UPDATE prices SET effective_from = now() WHERE id = $1', [(future.body as { id: string }).id]);
    fake.enqueue(textReply(['paid'], [10, 5]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'pay for it');
    await eventsUntilEnd(t, chat.secret, turn.executionId);
    const [record] = await usageOf(chat);
    expect(record).toMatchObject({ status: 'confirmed', costMicros: 15, priceId: (platform.body as { id: string }).id });
    expect((await ledgerOf(chat)).map((e) => [e.kind, e.amountMicros])).toEqual([['grant', 1_000], ['charge', -15]]);
    const prices = (await t.http().get('/v1/prices').set('authorization', as(chat)).expect(200)).body.data as Array<{ setBy: string }>;
    expect(prices.map((p) => p.setBy).sort()).toEqual(['organization', 'organization', 'platform']);
  });

  it('[USE-02] under credits a model without a platform price costs nothing by default no more: a running Turn stops with "budget" before its next model request, and a message answers 402 ModelNotPriced naming the model', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl, tools: [lookup()] });
    tools.fallback = jsonReply(200, { modelOutput: 'data' });
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The Turn's first model call starts before any credits and is held open while the platform grants them.
    fake.enqueue(
      heldStreamReply([chunks.role(), chunks.toolCallStart(0, 'c1', 'lookup'), chunks.toolCallArgs(0, '{}'), chunks.finish('tool_calls'), chunks.usage(10, 10)], { holdAfter: 1, release: released }),
      textReply(['never asked'], [1, 1]),
    );
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'look it up');
    await fake.waitForRequests(1);
    await grant(chat, 1_000);
    release();
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    // The tool ran; the next model call found no platform price and sent nothing.
    expect(await stopOf(turn.executionId)).toBe('budget');
    expect(fake.requests).toHaveLength(1);
    expect(events.filter((e) => e.type === 'model.started')).toHaveLength(1);

    const refused = await t.http().post(`/v1/chats/${chat.chatId}/messages`).set('authorization', as(chat)).send({ content: 'again' });
    expect({ status: refused.status, body: refused.body as unknown }).toEqual({ status: 402, body: { type: 'ModelNotPriced', message: expect.any(String), model: 'fake/gpt-test' } });
    expect(fake.requests).toHaveLength(1);
    expect((await ledgerOf(chat)).map((e) => e.kind)).toEqual(['grant']);
  });

  it('[USE-04] releasing an unknown usage charges its reservation: the credits and a token quota keep it as spent, and releasing again changes nothing', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    await platformPrice(chat, 0, 1_000_000);
    await grant(chat, 1_000);
    const quota = await t.http().post('/v1/budgets').set('authorization', as(chat)).send({ scope: { kind: 'organization' }, period: 'total', limitTokens: 100_000 }).expect(201);
    // The provider reports no usage: the record stays unknown, keeping its 100 max_tokens at 1 micro each.
    fake.enqueue(textReply(['silent']));
    const silent = await sendMessage(t, chat.secret, chat.chatId, 'first');
    await eventsUntilEnd(t, chat.secret, silent.executionId);
    const [unknown] = await usageOf(chat);
    expect(unknown).toMatchObject({ status: 'unknown', costMicros: null });
    const reservedTokens = ((await t.http().get(`/v1/budgets/${(quota.body as { id: string }).id}`).set('authorization', as(chat)).expect(200)).body as { reservedTokens: number }).reservedTokens;
    expect(reservedTokens).toBeGreaterThan(100);

    const released = await t.http().post(`/v1/usage/${unknown!.id as string}/release`).set('authorization', as(chat)).expect(200);
    expect(released.body).toEqual({ id: unknown!.id, releasedAt: expect.any(String), costMicros: 100 });
    const again = await t.http().post(`/v1/usage/${unknown!.id as string}/release`).set('authorization', as(chat)).expect(200);
    expect(again.body).toEqual(released.body);
    // Charged once, not forgotten: the balance lost the reservation, and nothing is held any more.
    expect((await t.http().get('/v1/credits').set('authorization', as(chat)).expect(200)).body).toEqual({ balanceMicros: 900, reservedMicros: 0 });
    expect((await ledgerOf(chat)).map((e) => [e.kind, e.amountMicros, e.usageRecordId])).toEqual([
      ['grant', 1_000, null],
      ['charge', -100, unknown!.id],
    ]);
    expect((await usageOf(chat))[0]).toMatchObject({ status: 'unknown', costMicros: 100, releasedAt: expect.any(String) });
    const standing = await t.http().get(`/v1/budgets/${(quota.body as { id: string }).id}`).set('authorization', as(chat)).expect(200);
    expect(standing.body).toMatchObject({ spentTokens: reservedTokens, reservedTokens: 0 });
  });

  it('grants, adjustments and price versions, the platform’s and the organization’s, are in the organization’s audit log, each once', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const other = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const own = await t.http().put(`/v1/prices/${model}`).set('authorization', as(chat)).send({ inputPerMillionMicros: 5, outputPerMillionMicros: 6 }).expect(200);
    const credits = `/v1/platform/organizations/${chat.organizationId}/credits`;
    const granted = await t.http().post(credits).set('authorization', admin()).set('idempotency-key', 'audit-1').send({ amountMicros: 2_000, reason: 'welcome' }).expect(201);
    // A replay of the same key answers the same entry and records nothing again.
    await t.http().post(credits).set('authorization', admin()).set('idempotency-key', 'audit-1').send({ amountMicros: 2_000, reason: 'welcome' }).expect(201);
    const adjusted = await t.http().post(credits).set('authorization', admin()).send({ amountMicros: -500, reason: 'correction' }).expect(201);
    const platform = await platformPrice(chat, 7, 8);

    const log = await t.http().get('/v1/audit-events?limit=200').set('authorization', as(chat)).expect(200);
    type Entry = { action: string; actor: { kind: string; id: string | null }; target: { type: string; id: string }; details: Record<string, unknown> };
    const billingOnly = (entries: Entry[]): Entry[] => entries.filter((e) => e.action.startsWith('price.') || e.action.startsWith('credits.'));
    // The fixture's setup (its model provider, its Bot) is audited too; this test reads the billing entries.
    const events = billingOnly((log.body as { data: Entry[] }).data);
    expect(events.map((e) => [e.action, e.actor, e.target])).toEqual([
      ['price.set', { kind: 'member', id: chat.memberId }, { type: 'price', id: (own.body as { id: string }).id }],
      ['credits.granted', { kind: 'platform-admin', id: null }, { type: 'credit-entry', id: (granted.body as { id: string }).id }],
      ['credits.adjusted', { kind: 'platform-admin', id: null }, { type: 'credit-entry', id: (adjusted.body as { id: string }).id }],
      ['price.set', { kind: 'platform-admin', id: null }, { type: 'price', id: (platform.body as { id: string }).id }],
    ]);
    expect(events.map((e) => e.details)).toEqual([
      expect.objectContaining({ model: 'fake/gpt-test', setBy: 'organization', inputPerMillionMicros: 5, outputPerMillionMicros: 6 }),
      { amountMicros: 2_000, kind: 'grant', reason: 'welcome' },
      { amountMicros: -500, kind: 'adjustment', reason: 'correction' },
      expect.objectContaining({ model: 'fake/gpt-test', setBy: 'platform', inputPerMillionMicros: 7, outputPerMillionMicros: 8 }),
    ]);
    // Another organization's log does not show them.
    const elsewhere = await t.http().get('/v1/audit-events?limit=200').set('authorization', as(other)).expect(200);
    expect(billingOnly((elsewhere.body as { data: Entry[] }).data)).toEqual([]);
  });
});

/** The operator's default price (OPENBOT_DEFAULT_PRICE) prices what the platform has not, as a version of its own. */
describe('billing: the operator’s default price', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_MODEL_CALL_MAX_TOKENS: '100', OPENBOT_DEFAULT_PRICE: '2000000,3000000' } });
    fake = await FakeOpenAiServer.start();
  });
  afterAll(async () => {
    await fake?.close();
    await t?.close();
  });

  it('[USE-01] under credits a model the platform has not priced is charged the default price, recorded as a "default" version; a platform version then wins', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const model = encodeURIComponent('fake/gpt-test');
    await t.http().put(`/v1/prices/${model}`).set('authorization', bearer(chat.secret)).send({ inputPerMillionMicros: 0, outputPerMillionMicros: 0 }).expect(200);
    await t.http().post(`/v1/platform/organizations/${chat.organizationId}/credits`).set('authorization', `Bearer ${t.adminToken}`).send({ amountMicros: 10_000, reason: 'test' }).expect(201);
    fake.enqueue(textReply(['one'], [10, 5]), textReply(['two'], [10, 5]), textReply(['three'], [10, 5]));
    for (const content of ['one', 'two']) {
      const turn = await sendMessage(t, chat.secret, chat.chatId, content);
      await eventsUntilEnd(t, chat.secret, turn.executionId);
    }
    const prices = (await t.http().get('/v1/prices').set('authorization', bearer(chat.secret)).expect(200)).body.data as Array<{ id: string; setBy: string; inputPerMillionMicros: number; outputPerMillionMicros: number }>;
    const defaults = prices.filter((p) => p.setBy === 'default');
    // One version for both calls: 10 × 2 + 5 × 3 = 35 micros each.
    expect(defaults).toEqual([expect.objectContaining({ inputPerMillionMicros: 2_000_000, outputPerMillionMicros: 3_000_000 })]);
    await t.http().put(`/v1/platform/organizations/${chat.organizationId}/prices/${model}`).set('authorization', `Bearer ${t.adminToken}`).send({ inputPerMillionMicros: 1_000_000, outputPerMillionMicros: 1_000_000 }).expect(200);
    const third = await sendMessage(t, chat.secret, chat.chatId, 'three');
    await eventsUntilEnd(t, chat.secret, third.executionId);
    const usage = (await t.http().get('/v1/usage').set('authorization', bearer(chat.secret)).expect(200)).body.data as Array<{ costMicros: number; priceId: string }>;
    expect(usage.map((u) => u.costMicros)).toEqual([35, 35, 15]);
    expect(usage.slice(0, 2).map((u) => u.priceId)).toEqual([defaults[0]!.id, defaults[0]!.id]);
    expect(fake.requests).toHaveLength(3);
  });
});

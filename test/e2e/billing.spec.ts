import { Engine } from '@openbot/engine';
import { chunks, FakeOpenAiServer, heldStreamReply, streamReply, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { addMember, bearer, createChatFixture, eventsUntilEnd, sendMessage, waitForEvent, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/** Prices, credits, budgets and their enforcement, through the public API (PLAT-08, USE-01..04). */
describe('billing', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let tools: FakeToolServer;

  beforeAll(async () => {
    // A small per-call cap: every reservation is the input estimate plus 100 output tokens.
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
  const usageOf = async (chat: ChatFixture) =>
    (await t.http().get('/v1/usage').set('authorization', as(chat)).expect(200)).body.data as Array<Record<string, unknown>>;
  const ledgerOf = async (chat: ChatFixture) =>
    (await t.http().get('/v1/credits/ledger?limit=200').set('authorization', as(chat)).expect(200)).body.data as Array<{ kind: string; amountMicros: number; usageRecordId: string | null }>;
  const stopOf = async (executionId: string) => ((await t.app.get(Engine).result(executionId)) as { stop: string }).stop;
  const lookup = () => ({ name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url: tools.url('/lookup'), retry: 'safe' });

  it('[PLAT-08] a call is priced once by the version in force when it started; a later price changes no recorded cost; every request sends max_tokens', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl, limits: { maxOutputTokens: 60 } });
    const first = await t.http().put(`/v1/prices/${model}`).set('authorization', as(chat)).send({ inputPerMillionMicros: 1_000_000, outputPerMillionMicros: 2_000_000 }).expect(200);
    expect(first.body).toMatchObject({ model: 'fake/gpt-test', inputPerMillionMicros: 1_000_000, outputPerMillionMicros: 2_000_000, cachedInputPerMillionMicros: 1_000_000 });
    fake.enqueue(textReply(['one'], [10, 5]), textReply(['two'], [10, 5]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'price me');
    await eventsUntilEnd(t, chat.secret, turn.executionId);
    // max_tokens: the smaller of the Bot's remaining output limit (60) and the per-call cap (100).
    expect(fake.requests[0]!.body.max_tokens).toBe(60);

    await t.http().put(`/v1/prices/${model}`).set('authorization', as(chat)).send({ inputPerMillionMicros: 3_000_000, outputPerMillionMicros: 3_000_000 }).expect(200);
    const [priced] = await usageOf(chat);
    // ceil((10 × 1,000,000 + 5 × 2,000,000) / 1,000,000) = 20, unchanged by the new version.
    expect(priced).toMatchObject({ status: 'confirmed', costMicros: 20, priceId: (first.body as { id: string }).id, cachedInputTokens: null });

    const second = await sendMessage(t, chat.secret, chat.chatId, 'again');
    await eventsUntilEnd(t, chat.secret, second.executionId);
    const records = await usageOf(chat);
    expect(records.map((r) => r.costMicros)).toEqual([20, 45]);
    const prices = (await t.http().get('/v1/prices').set('authorization', as(chat)).expect(200)).body.data as unknown[];
    expect(prices).toHaveLength(2);
  });

  it('[PLAT-08] the price list marks the version in force for each model: the latest not dated in the future, across pages; under credits only the platform’s', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const put = async (name: string, body: Record<string, unknown>, path = `/v1/prices/${encodeURIComponent(name)}`, auth = as(chat)): Promise<string> =>
      ((await t.http().put(path).set('authorization', auth).send(body).expect(200)).body as { id: string }).id;
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    const older = await put('fake/gpt-test', { inputPerMillionMicros: 1, outputPerMillionMicros: 1 });
    const current = await put('fake/gpt-test', { inputPerMillionMicros: 2, outputPerMillionMicros: 2 });
    const future = await put('fake/gpt-test', { inputPerMillionMicros: 3, outputPerMillionMicros: 3, effectiveFrom: tomorrow });
    const other = await put('fake/other-model', { inputPerMillionMicros: 4, outputPerMillionMicros: 4 });
    const inForce = async (): Promise<Record<string, boolean>> => {
      const listed = (await t.http().get('/v1/prices').set('authorization', as(chat)).expect(200)).body.data as Array<{ id: string; inForce: boolean }>;
      return Object.fromEntries(listed.map((p) => [p.id, p.inForce]));
    };
    expect(await inForce()).toEqual({ [older]: false, [current]: true, [future]: false, [other]: true });
    // A page holding only an old version still says it is not in force: the mark is the model's, not the page's.
    const firstPage = (await t.http().get('/v1/prices?limit=1').set('authorization', as(chat)).expect(200)).body as { data: Array<{ id: string; inForce: boolean }> };
    expect(firstPage.data).toEqual([expect.objectContaining({ id: older, inForce: false })]);
    // Tomorrow arrives: the future version takes over.
    await t.database.query('UPDATE prices SET effective_from = now() WHERE id = $1', [future]);
    expect(await inForce()).toEqual({ [older]: false, [current]: false, [future]: true, [other]: true });
    // With credits only the platform's versions price calls: the organization's own are no longer in force.
    await t.http().post(`/v1/platform/organizations/${chat.organizationId}/credits`).set('authorization', admin()).send({ amountMicros: 1_000, reason: 'test credits' }).expect(201);
    const platform = await put('fake/gpt-test', { inputPerMillionMicros: 5, outputPerMillionMicros: 5 }, `/v1/platform/organizations/${chat.organizationId}/prices/${model}`, admin());
    expect(await inForce()).toEqual({ [older]: false, [current]: false, [future]: false, [other]: false, [platform]: true });
  });

  it('[PLAT-08] bad amounts, unknown scopes and models, a budget with both or neither limit, a past effectiveFrom, an empty rate, bad summary parameters: each is 400 naming the field', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const issuesOf = async (method: 'put' | 'post', url: string, body: unknown, auth = as(chat)) => {
      const res = await t.http()[method](url).set('authorization', auth).send(body as object);
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      return (res.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path);
    };
    const price = (over: Record<string, unknown>) => ({ inputPerMillionMicros: 1, outputPerMillionMicros: 1, ...over });
    expect(await issuesOf('put', `/v1/prices/${model}`, price({ inputPerMillionMicros: -1 }))).toEqual(['inputPerMillionMicros']);
    expect(await issuesOf('put', `/v1/prices/${model}`, price({ outputPerMillionMicros: 1.5 }))).toEqual(['outputPerMillionMicros']);
    expect(await issuesOf('put', `/v1/prices/${model}`, price({ inputPerMillionMicros: 2 ** 53 }))).toEqual(['inputPerMillionMicros']);
    expect(await issuesOf('put', `/v1/prices/${encodeURIComponent('nobody/gpt')}`, price({}))).toEqual(['model']);
    expect(await issuesOf('put', `/v1/prices/${model}`, price({ effectiveFrom: '2020-01-01T00:00:00Z' }))).toEqual(['effectiveFrom']);
    const budget = (over: Record<string, unknown>) => ({ scope: { kind: 'organization' }, period: 'day', limitMicros: 10, ...over });
    expect(await issuesOf('post', '/v1/budgets', budget({ limitTokens: 5 }))).toEqual(['limitMicros']);
    expect(await issuesOf('post', '/v1/budgets', { scope: { kind: 'organization' }, period: 'day' })).toEqual(['limitMicros']);
    expect(await issuesOf('post', '/v1/budgets', budget({ limitMicros: 0 }))).toEqual(['limitMicros']);
    expect(await issuesOf('post', '/v1/budgets', budget({ scope: { kind: 'bot', id: '0190c3f0-1234-7abc-8def-0123456789ab' } }))).toEqual(['scope.id']);
    expect(await issuesOf('post', '/v1/budgets', budget({ scope: { kind: 'bot' } }))).toEqual(['scope.id']);
    expect(await issuesOf('post', '/v1/budgets', budget({ scope: { kind: 'organization', id: chat.botId } }))).toEqual(['scope.id']);
    expect(await issuesOf('post', '/v1/budgets', budget({ period: 'week' }))).toEqual(['period']);
    expect(await issuesOf('post', '/v1/rate-limits', { scope: { kind: 'organization' } })).toEqual(['requestsPerMinute']);
    expect(await issuesOf('post', '/v1/rate-limits', { scope: { kind: 'member', id: chat.botId }, requestsPerMinute: 5 })).toEqual(['scope.id']);
    const summary = async (query: string) => {
      const res = await t.http().get(`/v1/usage/summary?${query}`).set('authorization', as(chat));
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      return (res.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path);
    };
    expect(await summary('groupBy=week')).toEqual(['groupBy']);
    expect(await summary('from=yesterday')).toEqual(['from']);
    expect(await summary('from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z')).toEqual(['from']);
    const credits = `/v1/platform/organizations/${chat.organizationId}/credits`;
    expect(await issuesOf('post', credits, { amountMicros: 0, reason: 'nothing' }, admin())).toEqual(['amountMicros']);
    expect(await issuesOf('post', credits, { amountMicros: 0.5, reason: 'half' }, admin())).toEqual(['amountMicros']);
    expect(await issuesOf('post', credits, { amountMicros: 2 ** 53 + 2, reason: 'huge' }, admin())).toEqual(['amountMicros']);
  });

  it('[USE-01] a grant posts once per Idempotency-Key; prices become the platform’s; each confirmed usage record posts exactly one charge; the balance is the ledger’s sum', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const credits = `/v1/platform/organizations/${chat.organizationId}/credits`;
    const grant = await t.http().post(credits).set('authorization', admin()).set('idempotency-key', 'grant-1').send({ amountMicros: 1_000, reason: 'welcome' }).expect(201);
    const again = await t.http().post(credits).set('authorization', admin()).set('idempotency-key', 'grant-1').send({ amountMicros: 1_000, reason: 'welcome' }).expect(201);
    expect(again.body).toEqual(grant.body);
    expect(grant.body).toMatchObject({ kind: 'grant', amountMicros: 1_000, usageRecordId: null });
    const conflict = await t.http().post(credits).set('authorization', admin()).set('idempotency-key', 'grant-1').send({ amountMicros: 2_000, reason: 'welcome' });
    expect({ status: conflict.status, type: (conflict.body as { type: string }).type }).toEqual({ status: 409, type: 'CommandKeyConflict' });
    // With credits, an owner may not price a model: the administrator does.
    const refused = await t.http().put(`/v1/prices/${model}`).set('authorization', as(chat)).send({ inputPerMillionMicros: 0, outputPerMillionMicros: 0 });
    expect(refused.status).toBe(403);
    await t.http().put(`/v1/platform/organizations/${chat.organizationId}/prices/${model}`).set('authorization', admin()).send({ inputPerMillionMicros: 1_000_000, outputPerMillionMicros: 1_000_000 }).expect(200);

    tools.fallback = jsonReply(200, { modelOutput: 'data' });
    fake.enqueue(toolCallReply('c1', 'lookup', ['{}'], [10, 10]), textReply(['done'], [20, 10]));
    const botWithTool = await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', as(chat)).send({ tools: [lookup()] });
    expect(botWithTool.status).toBe(200);
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'charge me');
    await eventsUntilEnd(t, chat.secret, turn.executionId);
    const records = await usageOf(chat);
    expect(records.map((r) => r.costMicros)).toEqual([20, 30]);
    const ledger = await ledgerOf(chat);
    expect(ledger.map((e) => [e.kind, e.amountMicros])).toEqual([['grant', 1_000], ['charge', -20], ['charge', -30]]);
    expect(ledger.filter((e) => e.kind === 'charge').map((e) => e.usageRecordId)).toEqual(records.map((r) => r.id));
    const balance = await t.http().get('/v1/credits').set('authorization', as(chat)).expect(200);
    expect(balance.body).toEqual({ balanceMicros: 950, reservedMicros: 0 });
  });

  it('[USE-02] a budget reached mid-Turn stops the Turn with stop "budget" before the next model request; the next message answers 402 BudgetExceeded naming it', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl, tools: [lookup()] });
    const budget = await t.http().post('/v1/budgets').set('authorization', as(chat)).send({ scope: { kind: 'bot', id: chat.botId }, period: 'day', limitTokens: 1_000 }).expect(201);
    tools.fallback = jsonReply(200, { modelOutput: 'data' });
    // The first call reserves its estimate plus 100 tokens and fits; its confirmed usage passes the quota.
    fake.enqueue(toolCallReply('c1', 'lookup', ['{}'], [5, 2_000]), textReply(['never asked'], [1, 1]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'spend it all', 'spend-1');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(await stopOf(turn.executionId)).toBe('budget');
    expect(fake.requests).toHaveLength(1);
    expect(events.filter((e) => e.type === 'model.started')).toHaveLength(1);
    // The refused call is in the call log as failed, sent nothing, and is no server fault: no error record.
    const calls = await t.database.query<{ status: string }>(`SELECT status FROM execution_calls WHERE execution_id = $1 ORDER BY created_at`, [turn.executionId]);
    expect(calls.map((c) => c.status)).toEqual(['succeeded', 'succeeded', 'failed']);
    expect(await t.database.query('SELECT 1 FROM error_records WHERE execution_id = $1', [turn.executionId])).toEqual([]);
    const standing = await t.http().get(`/v1/budgets/${(budget.body as { id: string }).id}`).set('authorization', as(chat)).expect(200);
    expect(standing.body).toMatchObject({ limitTokens: 1_000, spentTokens: 2_005, reservedTokens: 0, spentMicros: null });

    const refused = await t.http().post(`/v1/chats/${chat.chatId}/messages`).set('authorization', as(chat)).send({ content: 'more' });
    expect({ status: refused.status, body: refused.body as unknown }).toEqual({
      status: 402,
      body: { type: 'BudgetExceeded', message: expect.any(String), budgetId: (budget.body as { id: string }).id },
    });
    // A retry of the admitted command still answers its 202.
    expect(await sendMessage(t, chat.secret, chat.chatId, 'spend it all', 'spend-1')).toEqual(turn);
  });

  it('[USE-03] 20 Turns racing for the last credits spend at most the balance: each call reserves its max_tokens worth before sending (budgets and credits locked in one order), and a call that cannot reserve sends nothing', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    await t.http().put(`/v1/platform/organizations/${chat.organizationId}/prices/${model}`).set('authorization', admin()).send({ inputPerMillionMicros: 0, outputPerMillionMicros: 1_000_000 }).expect(200);
    await t.http().post(`/v1/platform/organizations/${chat.organizationId}/credits`).set('authorization', admin()).send({ amountMicros: 550, reason: 'the last credits' }).expect(201);
    // Two budgets that do not bind: every reservation also locks them, in the one lock order (no deadlock).
    await t.http().post('/v1/budgets').set('authorization', as(chat)).send({ scope: { kind: 'organization' }, period: 'month', limitMicros: 10 ** 9 }).expect(201);
    await t.http().post('/v1/budgets').set('authorization', as(chat)).send({ scope: { kind: 'bot', id: chat.botId }, period: 'total', limitTokens: 10 ** 9 }).expect(201);
    // Every answer uses its whole max_tokens: 100 output tokens, 100 micros.
    fake.fallback = textReply(['spent'], [10, 100]);
    const chats = [chat.chatId];
    for (let i = 1; i < 20; i += 1) {
      const res = await t.http().post('/v1/chats').set('authorization', as(chat)).send({ botId: chat.botId }).expect(201);
      chats.push((res.body as { id: string }).id);
    }
    const turns = await Promise.all(chats.map((id) => sendMessage(t, chat.secret, id, 'race')));
    await Promise.all(turns.map((turn) => eventsUntilEnd(t, chat.secret, turn.executionId)));
    const stops = await Promise.all(turns.map((turn) => stopOf(turn.executionId)));
    const ledger = await ledgerOf(chat);
    const charges = ledger.filter((e) => e.kind === 'charge');
    expect(charges).toHaveLength(5);
    expect(fake.requests).toHaveLength(5);
    expect(stops.filter((s) => s === 'stop')).toHaveLength(5);
    expect(stops.filter((s) => s === 'budget')).toHaveLength(15);
    const balance = await t.http().get('/v1/credits').set('authorization', as(chat)).expect(200);
    expect(balance.body).toEqual({ balanceMicros: 50, reservedMicros: 0 });
  });

  it('[USE-04] unknown usage blocks no new call but keeps its reservation on the credits, visible, until an owner releases it, which charges it', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    await t.http().put(`/v1/platform/organizations/${chat.organizationId}/prices/${model}`).set('authorization', admin()).send({ inputPerMillionMicros: 0, outputPerMillionMicros: 1_000_000 }).expect(200);
    await t.http().post(`/v1/platform/organizations/${chat.organizationId}/credits`).set('authorization', admin()).send({ amountMicros: 1_000, reason: 'start' }).expect(201);
    // The provider reports no usage, then does.
    fake.enqueue(textReply(['silent']), textReply(['counted'], [3, 4]));
    const silent = await sendMessage(t, chat.secret, chat.chatId, 'first');
    await eventsUntilEnd(t, chat.secret, silent.executionId);
    const [unknown] = await usageOf(chat);
    expect(unknown).toMatchObject({ status: 'unknown', costMicros: null, inputTokens: null, outputTokens: null });
    // Its 100 max_tokens at 1 micro each stay reserved.
    expect((await t.http().get('/v1/credits').set('authorization', as(chat)).expect(200)).body).toEqual({ balanceMicros: 1_000, reservedMicros: 100 });

    const next = await sendMessage(t, chat.secret, chat.chatId, 'second');
    await eventsUntilEnd(t, chat.secret, next.executionId);
    expect(await stopOf(next.executionId)).toBe('stop');
    const summary = await t.http().get('/v1/usage/summary?groupBy=model').set('authorization', as(chat)).expect(200);
    expect(summary.body).toEqual({ data: [{ key: 'fake/gpt-test', calls: 2, inputTokens: 3, outputTokens: 4, costMicros: 4, unknownCalls: 1 }] });

    const released = await t.http().post(`/v1/usage/${unknown!.id as string}/release`).set('authorization', as(chat)).expect(200);
    expect(released.body).toEqual({ id: unknown!.id, releasedAt: expect.any(String), costMicros: 100 });
    await t.http().post(`/v1/usage/${unknown!.id as string}/release`).set('authorization', as(chat)).expect(200);
    // The release charged the reservation (decision 072): 1,000 − 4 − 100.
    expect((await t.http().get('/v1/credits').set('authorization', as(chat)).expect(200)).body).toEqual({ balanceMicros: 896, reservedMicros: 0 });
    const confirmed = (await usageOf(chat))[1]!;
    const settled = await t.http().post(`/v1/usage/${confirmed.id as string}/release`).set('authorization', as(chat));
    expect({ status: settled.status, type: (settled.body as { type: string }).type }).toEqual({ status: 409, type: 'UsageSettled' });
  });

  it('[DLG-01] limits.maxCostMicros: the run’s saved usage plus its reservations are checked before every model call; a call that would pass it does not send and the Turn stops with "max-cost"', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl, tools: [lookup()], limits: { maxCostMicros: 200 } });
    const bot = await t.http().get(`/v1/bots/${chat.botId}`).set('authorization', as(chat)).expect(200);
    expect((bot.body as { limits: unknown }).limits).toMatchObject({ maxCostMicros: 200 });
    for (const bad of [0, 1.5, 2 ** 53]) {
      const res = await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', as(chat)).send({ limits: { maxCostMicros: bad } });
      expect({ bad, status: res.status, paths: (res.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path) }).toEqual({ bad, status: 400, paths: ['limits.maxCostMicros'] });
    }
    await t.http().put(`/v1/prices/${model}`).set('authorization', as(chat)).send({ inputPerMillionMicros: 1_000_000, outputPerMillionMicros: 1_000_000 }).expect(200);
    tools.fallback = jsonReply(200, { modelOutput: 'data' });
    // The first call reserves its estimate plus 100 output micros and fits; it costs 110, and the next reservation would pass 200.
    fake.enqueue(toolCallReply('c1', 'lookup', ['{}'], [10, 100]), textReply(['never asked'], [1, 1]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'cap me');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(await stopOf(turn.executionId)).toBe('max-cost');
    expect(fake.requests).toHaveLength(1);
    expect((await usageOf(chat)).map((r) => r.costMicros)).toEqual([110]);
  });

  it('[PLAT-08] cached input is priced at the cached price when the provider reports it, and shown as cachedInputTokens', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    await t.http().put(`/v1/prices/${model}`).set('authorization', as(chat)).send({ inputPerMillionMicros: 1_000_000, cachedInputPerMillionMicros: 100_000, outputPerMillionMicros: 2_000_000 }).expect(200);
    const usage = { ...chunks.usage(1_000, 10), usage: { prompt_tokens: 1_000, completion_tokens: 10, total_tokens: 1_010, prompt_tokens_details: { cached_tokens: 800 } } };
    fake.enqueue(streamReply([chunks.role(), chunks.text('cached'), chunks.finish('stop'), usage]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'from the cache');
    await eventsUntilEnd(t, chat.secret, turn.executionId);
    // ceil((200 × 1,000,000 + 800 × 100,000 + 10 × 2,000,000) / 1,000,000) = 300.
    expect((await usageOf(chat))[0]).toMatchObject({ status: 'confirmed', inputTokens: 1_000, cachedInputTokens: 800, outputTokens: 10, costMicros: 300 });
  });

  it('[PLAT-08] platform billing routes take the administrator token only; an unknown organization is 404', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const byKey = await t.http().post(`/v1/platform/organizations/${chat.organizationId}/credits`).set('authorization', as(chat)).send({ amountMicros: 1, reason: 'self-service' });
    expect(byKey.status).toBe(403);
    const unknown = '0190c3f0-1234-7abc-8def-0123456789ab';
    const credits = await t.http().post(`/v1/platform/organizations/${unknown}/credits`).set('authorization', admin()).send({ amountMicros: 1, reason: 'nobody' });
    expect({ status: credits.status, type: (credits.body as { type: string }).type }).toEqual({ status: 404, type: 'OrganizationNotFound' });
    const price = await t.http().put(`/v1/platform/organizations/${unknown}/prices/${model}`).set('authorization', admin()).send({ inputPerMillionMicros: 1, outputPerMillionMicros: 1 });
    expect({ status: price.status, type: (price.body as { type: string }).type }).toEqual({ status: 404, type: 'OrganizationNotFound' });
    expect((await t.http().get('/v1/credits/ledger').set('authorization', as(chat)).expect(200)).body).toEqual({ data: [], next: null });
  });

  it('[PLAT-08] a queued Turn that starts with nothing left ends at once with stop "budget", sending nothing', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const other = await addMember(t, chat.organizationId);
    await t.http().post('/v1/budgets').set('authorization', as(chat)).send({ scope: { kind: 'organization' }, period: 'total', limitTokens: 1_000 }).expect(201);
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The owner's Turn streams and holds; its confirmed usage then spends the whole quota.
    fake.enqueue(heldStreamReply([chunks.role(), chunks.text('long'), chunks.finish('stop'), chunks.usage(5, 2_000)], { holdAfter: 2, release: released }));
    const first = await sendMessage(t, chat.secret, chat.chatId, 'first');
    await waitForEvent(t, chat.secret, first.executionId, 'text.delta');
    // Another member's message queues behind it while the quota still has room.
    const queued = await sendMessage(t, other.secret, chat.chatId, 'second');
    expect(queued.admission).toBe('queued');
    release();
    await eventsUntilEnd(t, chat.secret, first.executionId);
    await eventsUntilEnd(t, chat.secret, queued.executionId);
    expect(await stopOf(queued.executionId)).toBe('budget');
    expect(fake.requests).toHaveLength(1);
  });
});

import { Engine } from '@openbot/engine';
import { chunks, FakeOpenAiServer, streamReply, textReply, type Reply } from '../fakes/fake-openai-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * A call's `max_tokens` fits what its limits still afford (decision 081): lowered to the tightest
 * budget's, the credits' and the cost cap's room after the input estimate, never below the floor
 * (OPENBOT_MODEL_CALL_MIN_TOKENS, default 256), with the node's default per-call cap of 4,096.
 */
describe('budget fit', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    fake = await FakeOpenAiServer.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  const as = (chat: ChatFixture) => bearer(chat.secret);
  const admin = () => `Bearer ${t.adminToken}`;
  const model = encodeURIComponent('fake/gpt-test');
  const stopOf = async (executionId: string) => ((await t.app.get(Engine).result(executionId)) as { stop: string }).stop;
  const usageOf = async (chat: ChatFixture) =>
    (await t.http().get('/v1/usage').set('authorization', as(chat)).expect(200)).body.data as Array<{ estimatedInputTokens: number; inputTokens: number; outputTokens: number; costMicros: number }>;
  const budgetFor = async (chat: ChatFixture, limitTokens: number) =>
    (await t.http().post('/v1/budgets').set('authorization', as(chat)).send({ scope: { kind: 'bot', id: chat.botId }, period: 'day', limitTokens }).expect(201)).body as { id: string };
  const standingOf = async (chat: ChatFixture, id: string) => (await t.http().get(`/v1/budgets/${id}`).set('authorization', as(chat)).expect(200)).body as { spentTokens: number; reservedTokens: number };
  /** A call refused before it sent: failed in the call log with no error record, and no model attempt started (as before decision 081). */
  const expectRefusedUnsent = async (executionId: string, events: ReadonlyArray<{ type: string }>) => {
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(events.filter((e) => e.type === 'model.started')).toEqual([]);
    const calls = await t.database.query<{ status: string }>(`SELECT status FROM execution_calls WHERE execution_id = $1 ORDER BY created_at`, [executionId]);
    expect(calls.map((c) => c.status)).toEqual(['failed']);
    expect(await t.database.query('SELECT 1 FROM error_records WHERE execution_id = $1', [executionId])).toEqual([]);
    expect(await stopOf(executionId)).toBe('budget');
  };

  it('[PLAT-08] the README’s daily budget of 2,000 tokens: the first Turn runs with max_tokens lowered to what is left after its input estimate, the next to what is left then, and once spent the Turn stops "budget" sending nothing', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const budget = await budgetFor(chat, 2_000);
    fake.enqueue(textReply(['Once upon a time'], [20, 1_200]), textReply(['and then'], [40, 700]));

    const first = await sendMessage(t, chat.secret, chat.chatId, 'Write a long story.');
    await eventsUntilEnd(t, chat.secret, first.executionId);
    expect(await stopOf(first.executionId)).toBe('stop');
    const [one] = await usageOf(chat);
    // 2,000 − the input estimate: not the per-call cap of 4,096 that no longer fits.
    expect(one!.estimatedInputTokens).toBe(16);
    expect(fake.requests[0]!.body.max_tokens).toBe(1_984);
    // The reservation held exactly what was sent: the estimate plus that max_tokens, the whole budget.
    const reserved = await t.database.query<{ reserved_tokens: string }>(`SELECT reserved_tokens::text FROM usage_records WHERE execution_id = $1`, [first.executionId]);
    expect(reserved).toEqual([{ reserved_tokens: '2000' }]);
    expect(await standingOf(chat, budget.id)).toMatchObject({ spentTokens: 1_220, reservedTokens: 0 });

    const second = await sendMessage(t, chat.secret, chat.chatId, 'More!');
    await eventsUntilEnd(t, chat.secret, second.executionId);
    expect(await stopOf(second.executionId)).toBe('stop');
    const two = (await usageOf(chat))[1]!;
    // 2,000 − 1,220 spent − this call's estimate (the story so far and the new message).
    expect(fake.requests[1]!.body.max_tokens).toBe(780 - two.estimatedInputTokens);
    expect(await standingOf(chat, budget.id)).toMatchObject({ spentTokens: 1_960, reservedTokens: 0 });

    // 40 tokens left: less than the input estimate plus the floor. The message is admitted (something is left), the call is not sent.
    const third = await sendMessage(t, chat.secret, chat.chatId, 'Even more!');
    expect(third.admission).toBe('started');
    await expectRefusedUnsent(third.executionId, await eventsUntilEnd(t, chat.secret, third.executionId));
    expect(fake.requests).toHaveLength(2);
    expect(await standingOf(chat, budget.id)).toMatchObject({ spentTokens: 1_960, reservedTokens: 0 });
  });

  it('[USE-03] credits for three and a half Turns and twelve Turns at once: four calls send (the last lowered to the half Turn left), the ledger charges exactly the credits, and the other eight stop "budget" sending nothing', async () => {
    // A Turn is 1,000 output tokens (the Bot's output limit) at 1 micro each; input costs nothing.
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl, limits: { maxOutputTokens: 1_000 } });
    await t.http().put(`/v1/platform/organizations/${chat.organizationId}/prices/${model}`).set('authorization', admin()).send({ inputPerMillionMicros: 0, outputPerMillionMicros: 1_000_000 }).expect(200);
    await t.http().post(`/v1/platform/organizations/${chat.organizationId}/credits`).set('authorization', admin()).send({ amountMicros: 3_500, reason: 'three and a half Turns' }).expect(201);
    // The model writes until max_tokens: a lowered call ends with finish_reason "length".
    const wholeAnswer: Reply = (res) => {
      const maxTokens = (fake.requests.at(-1)!.body as { max_tokens: number }).max_tokens;
      const used = Math.min(1_000, maxTokens);
      return streamReply([chunks.role(), chunks.text('spent'), chunks.finish(used < 1_000 ? 'length' : 'stop'), chunks.usage(10, used)])(res);
    };
    fake.fallback = wholeAnswer;
    const chats = [chat.chatId];
    for (let i = 1; i < 12; i += 1) chats.push(((await t.http().post('/v1/chats').set('authorization', as(chat)).send({ botId: chat.botId }).expect(201)).body as { id: string }).id);

    const turns = await Promise.all(chats.map((id) => sendMessage(t, chat.secret, id, 'race')));
    const ends = await Promise.all(turns.map(async (turn) => (await eventsUntilEnd(t, chat.secret, turn.executionId)).at(-1)));
    const stops = await Promise.all(turns.map((turn) => stopOf(turn.executionId)));
    // Every Turn ends cleanly: completed, no fault recorded.
    expect(ends.map((end) => end?.state)).toEqual(Array.from({ length: 12 }, () => 'completed'));
    expect(await t.database.query('SELECT 1 FROM error_records WHERE execution_id = ANY($1::uuid[])', [turns.map((turn) => turn.executionId)])).toEqual([]);

    // Whatever the order, each reservation takes min(1,000, what is left): 1,000 three times, then the 500 left.
    expect(fake.requests.map((r) => (r.body as { max_tokens: number }).max_tokens).sort((a, b) => b - a)).toEqual([1_000, 1_000, 1_000, 500]);
    expect(stops.toSorted()).toEqual(['budget', 'budget', 'budget', 'budget', 'budget', 'budget', 'budget', 'budget', 'length', 'stop', 'stop', 'stop']);
    const ledger = (await t.http().get('/v1/credits/ledger?limit=200').set('authorization', as(chat)).expect(200)).body.data as Array<{ kind: string; amountMicros: number }>;
    const charges = ledger.filter((e) => e.kind === 'charge');
    expect(charges).toHaveLength(4);
    // Used to the end, never past it.
    expect(charges.reduce((sum, e) => sum + e.amountMicros, 0)).toBe(-3_500);
    expect((await t.http().get('/v1/credits').set('authorization', as(chat)).expect(200)).body).toEqual({ balanceMicros: 0, reservedMicros: 0 });
  });

  it('[DLG-01] a money budget and a run’s cost cap lower max_tokens to the most whose price with the input estimate fits the tighter one', async () => {
    // 1 micro per input token, 2 per output token; "Write a long story." to a brief Bot is estimated at 16 input tokens.
    const price = { inputPerMillionMicros: 1_000_000, outputPerMillionMicros: 2_000_000 };
    const budgeted = await createChatFixture(t, { baseUrl: fake.baseUrl, limits: { maxCostMicros: 1_500 } });
    await t.http().put(`/v1/prices/${model}`).set('authorization', as(budgeted)).send(price).expect(200);
    await t.http().post('/v1/budgets').set('authorization', as(budgeted)).send({ scope: { kind: 'organization' }, period: 'month', limitMicros: 1_000 }).expect(201);
    fake.enqueue(textReply(['Once'], [16, 4]));
    const first = await sendMessage(t, budgeted.secret, budgeted.chatId, 'Write a long story.');
    await eventsUntilEnd(t, budgeted.secret, first.executionId);
    expect(await stopOf(first.executionId)).toBe('stop');
    // The budget is the tighter: (1,000 − 16) / 2 = 492, priced 16 + 984 = 1,000 micros at most.
    expect(fake.requests[0]!.body.max_tokens).toBe(492);

    const capped = await createChatFixture(t, { baseUrl: fake.baseUrl, limits: { maxCostMicros: 600 } });
    await t.http().put(`/v1/prices/${model}`).set('authorization', as(capped)).send(price).expect(200);
    await t.http().post('/v1/budgets').set('authorization', as(capped)).send({ scope: { kind: 'organization' }, period: 'month', limitMicros: 1_000 }).expect(201);
    fake.enqueue(textReply(['Once'], [16, 4]));
    const second = await sendMessage(t, capped.secret, capped.chatId, 'Write a long story.');
    await eventsUntilEnd(t, capped.secret, second.executionId);
    expect(await stopOf(second.executionId)).toBe('stop');
    // The run's own cap is the tighter: (600 − 16) / 2 = 292.
    expect(fake.requests[1]!.body.max_tokens).toBe(292);
    const held = await t.database.query<{ reserved_micros: string }>(`SELECT reserved_micros::text FROM usage_records WHERE execution_id = $1`, [second.executionId]);
    expect(held).toEqual([{ reserved_micros: '600' }]);
  });

  it('[PLAT-08] the floor: a budget that affords 255 output tokens after the estimate refuses the call as before; one that affords 256 sends max_tokens 256', async () => {
    // The same Bot and message in three organizations: the same input estimate.
    const probe = await createChatFixture(t, { baseUrl: fake.baseUrl });
    fake.enqueue(textReply(['probe'], [8, 1]));
    const measured = await sendMessage(t, probe.secret, probe.chatId, 'Write a haiku.');
    await eventsUntilEnd(t, probe.secret, measured.executionId);
    const estimate = (await usageOf(probe))[0]!.estimatedInputTokens;
    expect(fake.requests[0]!.body.max_tokens).toBe(4_096);

    const short = await createChatFixture(t, { baseUrl: fake.baseUrl });
    await budgetFor(short, estimate + 255);
    const refused = await sendMessage(t, short.secret, short.chatId, 'Write a haiku.');
    await expectRefusedUnsent(refused.executionId, await eventsUntilEnd(t, short.secret, refused.executionId));
    expect(fake.requests).toHaveLength(1);

    const enough = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const budget = await budgetFor(enough, estimate + 256);
    fake.enqueue(textReply(['An old silent pond'], [8, 9]));
    const sent = await sendMessage(t, enough.secret, enough.chatId, 'Write a haiku.');
    await eventsUntilEnd(t, enough.secret, sent.executionId);
    expect(await stopOf(sent.executionId)).toBe('stop');
    expect(fake.requests[1]!.body.max_tokens).toBe(256);
    expect(await standingOf(enough, budget.id)).toMatchObject({ spentTokens: 17, reservedTokens: 0 });
  });
});

import { Engine } from '@openbot/engine';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { bearer, createChatFixture, eventsUntilEnd, listMessages, sendMessage, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';

interface ReminderBody {
  id: string;
  chatId: string;
  message: string;
  dueAt: string;
  state: string;
}

/**
 * The built-in `remind` tool (APPR-01, FW-06): a durable reminder, delivered by an execution of
 * its own on the engine's durable timer, that posts its message into the Chat when due.
 */
describe('reminders', () => {
  let a: TestApp;
  let b: TestApp | undefined;
  let model: FakeOpenAiServer;

  beforeAll(async () => {
    a = await startTestApp();
    // A second node on the same database: it sets the reminder, then stops before it is due.
    b = await startTestApp({ database: a.database, masterKey: a.config.masterKey });
    model = await FakeOpenAiServer.start();
  });
  afterAll(async () => {
    await model?.close();
    await b?.close();
    await a?.close();
  });

  const remind = { kind: 'remind' };
  const reminders = async (t: TestApp, chat: ChatFixture) =>
    ((await t.http().get(`/v1/reminders?chatId=${chat.chatId}`).set('authorization', bearer(chat.secret)).expect(200)).body as { data: ReminderBody[] }).data;
  const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> => {
    for (let i = 0; i < 600; i++) {
      const value = await read();
      if (done(value)) return value;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  const deliveryOf = async (t: TestApp, chat: ChatFixture, turnExecution: string): Promise<{ id: string; kind: string }> => {
    const page = (await t.http().get(`/v1/executions/${turnExecution}/children`).set('authorization', bearer(chat.secret)).expect(200)).body as { data: Array<{ id: string; kind: string }> };
    return page.data.find((c) => c.kind === 'chat.reminder')!;
  };

  it('[APPR-01] [FW-06] a reminder set by the remind tool survives the node that set it and posts its message into the Chat once, as user input of author reminder', async () => {
    const chat = await createChatFixture(b!, { baseUrl: model.baseUrl, tools: [remind] });
    model.enqueue(toolCallReply('r1', 'remind', ['{"message":"Time to stand up","inSeconds":2}'], [1, 1]), textReply(['I will remind you.'], [1, 1]));
    model.fallback = textReply(['Standing up now.'], [1, 1]);
    const turn = await sendMessage(b!, chat.secret, chat.chatId, 'Remind me to stand up');
    const events = await eventsUntilEnd(b!, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ callId: 'r1', isError: false });
    const [pending] = await reminders(b!, chat);
    expect(pending).toEqual({ id: expect.any(String), chatId: chat.chatId, message: 'Time to stand up', dueAt: expect.any(String), state: 'pending' });
    const delivery = await deliveryOf(b!, chat, turn.executionId);
    expect(delivery).toMatchObject({ kind: 'chat.reminder' });

    // The node that set it stops; the other one delivers it from the saved timer.
    await b!.close();
    b = undefined;
    const messages = await until(() => listMessages(a, chat.secret, chat.chatId), (m) => m.some((x) => (x as { author?: string }).author === 'reminder'), 'the reminder message');
    expect(messages.find((m) => (m as { author?: string }).author === 'reminder')).toMatchObject({ role: 'user', content: 'Time to stand up', author: 'reminder' });
    expect(await waitForExecutionState(a, chat.secret, delivery.id, 'completed')).toMatchObject({ state: 'completed' });
    expect((await reminders(a, chat))[0]).toMatchObject({ id: pending!.id, state: 'sent' });
    // It started a Turn that answered it; exactly one reminder message was posted.
    await until(() => listMessages(a, chat.secret, chat.chatId), (m) => m.some((x) => x.content === 'Standing up now.'), 'the reminded Turn');
    expect((await listMessages(a, chat.secret, chat.chatId)).filter((m) => m.content === 'Time to stand up')).toHaveLength(1);
    const prompt = (model.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> }).messages;
    expect(prompt.at(-1)).toEqual({ role: 'user', content: 'Time to stand up' });
  });

  it('DELETE /v1/reminders/{id} cancels a pending reminder, which is then never posted; bad arguments set none; another organization gets 404', async () => {
    const chat = await createChatFixture(a, { baseUrl: model.baseUrl, tools: [remind] });
    model.enqueue(
      toolCallReply('r2', 'remind', ['{"message":"Never posted","inSeconds":1}', ], [1, 1]),
      toolCallReply('r3', 'remind', ['{"message":"Both","inSeconds":5,"at":"2030-01-01T00:00:00Z"}'], [1, 1]),
      textReply(['Done.'], [1, 1]),
    );
    const turn = await sendMessage(a, chat.secret, chat.chatId, 'Remind me, then change your mind');
    const events = await eventsUntilEnd(a, chat.secret, turn.executionId);
    expect(events.filter((e) => e.type === 'tool.result').map((e) => [e.callId, e.isError])).toEqual([
      ['r2', false],
      ['r3', true],
    ]);
    const listed = await reminders(a, chat);
    expect(listed).toHaveLength(1);
    const cancelled = await a.http().delete(`/v1/reminders/${listed[0]!.id}`).set('authorization', bearer(chat.secret)).expect(200);
    expect(cancelled.body).toMatchObject({ id: listed[0]!.id, state: 'cancelled' });
    // The delivery wakes when due, finds it cancelled, and posts nothing.
    const delivery = await deliveryOf(a, chat, turn.executionId);
    expect(await waitForExecutionState(a, chat.secret, delivery.id, 'completed')).toMatchObject({ state: 'completed' });
    expect((await listMessages(a, chat.secret, chat.chatId)).some((m) => m.content === 'Never posted')).toBe(false);
    // Repeating the cancel changes nothing; another organization's key sees no such reminder.
    expect((await a.http().delete(`/v1/reminders/${listed[0]!.id}`).set('authorization', bearer(chat.secret)).expect(200)).body).toMatchObject({ state: 'cancelled' });
    const other = await a.createOrganization('Elsewhere');
    const res = await a.http().delete(`/v1/reminders/${listed[0]!.id}`).set('authorization', bearer(other.secret));
    expect(res.status).toBe(404);
    expect(((await a.http().get(`/v1/reminders?chatId=${chat.chatId}`).set('authorization', bearer(other.secret)).expect(200)).body as { data: unknown[] }).data).toEqual([]);
    expect((await a.http().get('/v1/reminders?chatId=nope').set('authorization', bearer(chat.secret))).status).toBe(400);
  });
  /** A member of the chat's organization (not its owner) with a key of its own. */
  const memberOf = async (chat: ChatFixture): Promise<{ memberId: string; secret: string }> => {
    const added = (await a.http().post('/v1/members').set('authorization', bearer(chat.secret)).send({ role: 'member' }).expect(201)).body as { member: { id: string }; apiKey: { secret: string } };
    return { memberId: added.member.id, secret: added.apiKey.secret };
  };
  /** The Turn a reminder's message started (or steered), once it was posted. */
  const remindedTurn = async (chat: ChatFixture, message: string) => {
    const messages = await until(() => listMessages(a, chat.secret, chat.chatId), (m) => m.some((x) => x.content === message), 'the reminder message');
    const [turn] = await a.database.query<{ execution_id: string; scope_kind: string; scope_id: string }>(
      'SELECT execution_id, scope_kind, scope_id FROM chat_turns WHERE id = $1',
      [messages.find((x) => x.content === message)!.turnId],
    );
    return turn!;
  };

  it("only the member whose Turn set a reminder, an owner or an admin may cancel it: another member gets 403 and the reminder stays pending", async () => {
    const chat = await createChatFixture(a, { baseUrl: model.baseUrl, tools: [remind] });
    const setter = await memberOf(chat);
    const intruder = await memberOf(chat);
    const setReminder = async (message: string): Promise<string> => {
      model.enqueue(toolCallReply(`r-${message}`, 'remind', [JSON.stringify({ message, inSeconds: 86_400 })], [1, 1]), textReply(['Noted.'], [1, 1]));
      const turn = await sendMessage(a, setter.secret, chat.chatId, `Remind me: ${message}`);
      expect((await eventsUntilEnd(a, setter.secret, turn.executionId)).at(-1)).toMatchObject({ state: 'completed' });
      return (await reminders(a, chat)).find((r) => r.message === message)!.id;
    };
    const cancel = (secret: string, id: string) => a.http().delete(`/v1/reminders/${id}`).set('authorization', bearer(secret));

    const first = await setReminder('Call the bank');
    const refused = await cancel(intruder.secret, first);
    expect({ status: refused.status, type: (refused.body as { type: string }).type }).toEqual({ status: 403, type: 'Forbidden' });
    expect((await reminders(a, chat)).find((r) => r.id === first)).toMatchObject({ state: 'pending' });
    expect((await cancel(setter.secret, first).expect(200)).body).toMatchObject({ id: first, state: 'cancelled' });

    // The owner may cancel a member's reminder too.
    const second = await setReminder('Renew the lease');
    expect((await cancel(chat.secret, second).expect(200)).body).toMatchObject({ id: second, state: 'cancelled' });
  });

  it("[FW-06] [IDN-02] a reminder's message posts as the member whose Turn set it: its Turn has that member's scope and identity, never the Chat owner's or a service's", async () => {
    const chat = await createChatFixture(a, { baseUrl: model.baseUrl, tools: [remind] });
    const member = await memberOf(chat);
    model.enqueue(toolCallReply('r4', 'remind', ['{"message":"Water the plants","inSeconds":1}'], [1, 1]), textReply(['Noted.'], [1, 1]));
    model.fallback = textReply(['Watering.'], [1, 1]);
    // The member's own key sets it; the Chat was created by the owner.
    const turn = await sendMessage(a, member.secret, chat.chatId, 'Remind me to water the plants');
    expect((await eventsUntilEnd(a, member.secret, turn.executionId)).at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });

    const reminded = await remindedTurn(chat, 'Water the plants');
    expect(reminded).toMatchObject({ scope_kind: 'member', scope_id: member.memberId });
    expect(reminded.scope_id).not.toBe(chat.memberId);
    const [execution] = await a.database.query<{ scope_kind: string; scope_id: string }>('SELECT scope_kind, scope_id FROM executions WHERE id = $1', [reminded.execution_id]);
    expect(execution).toEqual({ scope_kind: 'member', scope_id: member.memberId });
    const engine = a.app.get(Engine);
    const [setter, posted] = (await Promise.all([engine.identity(turn.executionId), engine.identity(reminded.execution_id)])) as Array<{ owner: unknown; actor: unknown; token: unknown }>;
    expect(posted).toMatchObject({ owner: setter!.owner, actor: setter!.actor, token: setter!.token });
    expect(posted!.actor).toMatchObject({ kind: 'member', id: member.memberId });
  });

  it('[FW-06] a reminder whose post meets an exhausted budget stays pending and posts nothing; the delivery waits and tries again, and posts once the budget allows it', async () => {
    const chat = await createChatFixture(a, { baseUrl: model.baseUrl, tools: [remind] });
    model.enqueue(toolCallReply('r5', 'remind', ['{"message":"Call the bank","inSeconds":3}'], [1, 1]), textReply(['Will do.'], [1, 1]));
    model.fallback = textReply(['Calling.'], [1, 1]);
    const turn = await sendMessage(a, chat.secret, chat.chatId, 'Remind me to call the bank');
    await eventsUntilEnd(a, chat.secret, turn.executionId);
    // The Turn spent 4 tokens: a budget of 1 has nothing left when the reminder is due.
    const budget = (await a.http().post('/v1/budgets').set('authorization', bearer(chat.secret)).send({ scope: { kind: 'bot', id: chat.botId }, period: 'day', limitTokens: 1 }).expect(201)).body as { id: string };
    const delivery = await deliveryOf(a, chat, turn.executionId);
    const posts = () =>
      a.database.query<{ status: string }>(`SELECT status FROM execution_calls WHERE execution_id = $1 AND kind = 'channel' ORDER BY created_at, id`, [delivery.id]);
    // The refused post is recorded in the call log; nothing was posted, and the delivery waits to try again.
    await until(posts, (rows) => rows.some((r) => r.status === 'failed'), 'the refused post');
    expect(await waitForExecutionState(a, chat.secret, delivery.id, 'waiting')).toMatchObject({ state: 'waiting' });
    expect((await reminders(a, chat))[0]).toMatchObject({ message: 'Call the bank', state: 'pending' });
    expect((await listMessages(a, chat.secret, chat.chatId)).some((m) => m.content === 'Call the bank')).toBe(false);

    await a.http().delete(`/v1/budgets/${budget.id}`).set('authorization', bearer(chat.secret)).expect((res) => expect([200, 204]).toContain(res.status));
    await until(() => listMessages(a, chat.secret, chat.chatId), (m) => m.some((x) => x.content === 'Call the bank'), 'the retried reminder');
    expect(await waitForExecutionState(a, chat.secret, delivery.id, 'completed', 20_000)).toMatchObject({ state: 'completed' });
    expect((await reminders(a, chat))[0]).toMatchObject({ state: 'sent' });
    expect((await listMessages(a, chat.secret, chat.chatId)).filter((m) => m.content === 'Call the bank')).toHaveLength(1);
    expect((await posts()).map((r) => r.status).at(-1)).toBe('succeeded');
  });
});

import { chunks, FakeOpenAiServer, streamReply, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { bearer, createChatFixture, eventsUntilEnd, listMessages, sendMessage, waitForEvent } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/** A Turn runs until a final answer or one of its Bot's limits: steps, output tokens, time. */
describe('turn limits', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let tools: FakeToolServer;

  beforeAll(async () => {
    t = await startTestApp();
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

  const lookup = () => ({ name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url: tools.url('/lookup'), retry: 'safe' });

  it('stops after maxSteps model steps, with every tool call of the last step answered', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl, tools: [lookup()], limits: { maxSteps: 2 } });
    tools.fallback = jsonReply(200, { modelOutput: 'more' });
    fake.enqueue(toolCallReply('c1', 'lookup', ['{}'], [5, 1]), toolCallReply('c2', 'lookup', ['{}'], [6, 1]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'loop');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    // `execution.ended` names the limit too, as the view does.
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed', stop: 'max-steps' });
    expect(events.filter((e) => e.type === 'model.started')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'tool.result')).toHaveLength(2);
    expect(fake.requests).toHaveLength(2);
    const result = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM chat_messages WHERE turn_id = $1 AND role = 'tool'`, [turn.turnId]);
    expect(result[0]!.n).toBe(2);
    // [TASK-01] the view names the limit that ended it, from the saved state.
    const view = await t.http().get(`/v1/executions/${turn.executionId}`).set('authorization', bearer(chat.secret)).expect(200);
    expect(view.body).toMatchObject({ stop: 'max-steps', limits: { maxSteps: 2 }, spent: { steps: 2, outputTokens: 2 } });
  });

  it('stops once the confirmed output tokens reach maxOutputTokens', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl, tools: [lookup()], limits: { maxOutputTokens: 50 } });
    tools.fallback = jsonReply(200, { modelOutput: 'data' });
    fake.enqueue(toolCallReply('c1', 'lookup', ['{}'], [5, 60]), textReply(['never asked']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'expensive');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed', stop: 'max-output-tokens' });
    expect(fake.requests).toHaveLength(1);
    const view = await t.http().get(`/v1/executions/${turn.executionId}`).set('authorization', bearer(chat.secret)).expect(200);
    expect(view.body).toMatchObject({ stop: 'max-output-tokens', spent: { outputTokens: 60 } });
  });

  it('fails with category timeout when the Turn outlives maxSeconds while waiting for a client tool', async () => {
    const chat = await createChatFixture(t, {
      baseUrl: fake.baseUrl,
      tools: [{ name: 'ask_user', description: 'Asks the user', parameters: { type: 'object' } }],
      limits: { maxSeconds: 1 },
    });
    fake.enqueue(toolCallReply('c1', 'ask_user', ['{}'], [5, 1]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'wait for me');
    await waitForEvent(t, chat.secret, turn.executionId, 'tool.called');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'failed', category: 'timeout', errorId: expect.any(String), stop: 'max-seconds' });
    // The unanswered call is left out of the stored history; the user input stays, and the Turn
    // ends with its (empty) partial reply marked with the limit that stopped it.
    expect((await listMessages(t, chat.secret, chat.chatId)).map((m) => [m.role, m.content, m.stop])).toEqual([
      ['user', 'wait for me', null],
      ['assistant', '', 'max-seconds'],
    ]);
    const late = await t.http().post(`/v1/chats/${chat.chatId}/tool-outputs`).set('authorization', bearer(chat.secret)).send({ callId: 'c1', output: 'too late' });
    expect(late.status).toBe(404);
  });

  it('a Turn a limit stopped keeps what it said as a partial reply marked `stop`, which the next Turn reads as history', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl, tools: [lookup()], limits: { maxOutputTokens: 50 } });
    tools.fallback = jsonReply(200, { modelOutput: 'data' });
    const saidThenCalled = streamReply([chunks.role(), chunks.text('Partial thoughts'), chunks.toolCallStart(0, 'c1', 'lookup'), chunks.toolCallArgs(0, '{}'), chunks.finish('tool_calls'), chunks.usage(5, 60)]);
    const heldBack = streamReply([chunks.role(), chunks.text('So far I found data'), chunks.toolCallStart(0, 'c2', 'ask_user'), chunks.toolCallArgs(0, '{}'), chunks.finish('tool_calls'), chunks.usage(5, 1)]);
    fake.enqueue(saidThenCalled, textReply(['Next answer']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'expensive');
    expect((await eventsUntilEnd(t, chat.secret, turn.executionId)).at(-1)).toMatchObject({ state: 'completed', stop: 'max-output-tokens' });
    const messages = await listMessages(t, chat.secret, chat.chatId);
    expect(messages.map((m) => [m.role, m.content, m.stop, m.turnId === turn.turnId])).toEqual([
      ['user', 'expensive', null, true],
      ['assistant', 'Partial thoughts', null, true],
      ['tool', 'data', null, true],
      ['assistant', '', 'max-output-tokens', true],
    ]);
    // The next Turn reads what was said as history; an empty partial reply tells the model nothing.
    const next = await sendMessage(t, chat.secret, chat.chatId, 'go on');
    await eventsUntilEnd(t, chat.secret, next.executionId);
    const prompt = (fake.requests[1]!.body as { messages: Array<{ role: string; content: string | null }> }).messages.map((m) => `${m.role}:${m.content ?? ''}`);
    expect(prompt.slice(1)).toEqual(['user:expensive', 'assistant:Partial thoughts', 'tool:data', 'user:go on']);

    // A Turn stopped while a call of its last step waited keeps that step's text, marked.
    const asking = await createChatFixture(t, { baseUrl: fake.baseUrl, tools: [{ name: 'ask_user', description: 'Asks the user', parameters: { type: 'object' } }], limits: { maxSeconds: 1 } });
    fake.enqueue(heldBack);
    const waiting = await sendMessage(t, asking.secret, asking.chatId, 'ask me');
    expect((await eventsUntilEnd(t, asking.secret, waiting.executionId)).at(-1)).toMatchObject({ state: 'failed', stop: 'max-seconds' });
    expect((await listMessages(t, asking.secret, asking.chatId)).map((m) => [m.role, m.content, m.stop])).toEqual([
      ['user', 'ask me', null],
      ['assistant', 'So far I found data', 'max-seconds'],
    ]);
  });

  it('a Turn a budget stopped before its first model call still leaves a reply in the Chat: an empty partial reply marked `budget`', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    // Something is left, so the message is admitted; too little for any call, so none is sent.
    await t.http().post('/v1/budgets').set('authorization', bearer(chat.secret)).send({ scope: { kind: 'bot', id: chat.botId }, period: 'day', limitTokens: 100 }).expect(201);
    fake.enqueue(textReply(['never asked']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'hello');
    expect((await eventsUntilEnd(t, chat.secret, turn.executionId)).at(-1)).toMatchObject({ state: 'completed', stop: 'budget' });
    expect(fake.requests).toHaveLength(0);
    expect((await listMessages(t, chat.secret, chat.chatId)).map((m) => [m.role, m.content, m.stop, m.turnId])).toEqual([
      ['user', 'hello', null, turn.turnId],
      ['assistant', '', 'budget', turn.turnId],
    ]);
  });

  it('a final answer ends with `stop: null` on `execution.ended` and on the view', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    fake.enqueue(textReply(['done']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'hi');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toEqual(expect.objectContaining({ type: 'execution.ended', state: 'completed', stop: null }));
    const view = await t.http().get(`/v1/executions/${turn.executionId}`).set('authorization', bearer(chat.secret)).expect(200);
    expect(view.body).toMatchObject({ stop: null });
  });
  it("[TASK-01] a Turn keeps its saved step and cost limits across a restart: the node that started it stops, another one finishes it within them, whatever the Bot says now", async () => {
    // The node that starts the Turn, on the same database; it stops while the Turn waits.
    const first = await startTestApp({ database: t.database, masterKey: t.config.masterKey });
    let closed = false;
    try {
      const ask = { name: 'ask_user', description: 'Asks the user', parameters: { type: 'object' } };
      const chat = await createChatFixture(first, { baseUrl: fake.baseUrl, tools: [ask, lookup()], limits: { maxSteps: 2, maxCostMicros: 5_000_000 } });
      tools.fallback = jsonReply(200, { modelOutput: 'more' });
      fake.enqueue(toolCallReply('c1', 'ask_user', ['{}'], [5, 1]), toolCallReply('c2', 'lookup', ['{}'], [5, 1]));
      fake.fallback = toolCallReply('never', 'lookup', ['{}'], [5, 1]);
      const turn = await sendMessage(first, chat.secret, chat.chatId, 'ask, then loop');
      await waitForEvent(first, chat.secret, turn.executionId, 'tool.called');
      await first.close();
      closed = true;

      // The Bot's limits change meanwhile; the Turn keeps the ones it saved at its first step.
      await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', bearer(chat.secret)).send({ limits: { maxSteps: 16, maxCostMicros: 9_000_000 } }).expect(200);
      await t.http().post(`/v1/chats/${chat.chatId}/tool-outputs`).set('authorization', bearer(chat.secret)).send({ callId: 'c1', output: 'yes' }).expect(202);
      const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
      expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed', stop: 'max-steps' });
      expect(fake.requests).toHaveLength(2);
      const view = await t.http().get(`/v1/executions/${turn.executionId}`).set('authorization', bearer(chat.secret)).expect(200);
      expect(view.body).toMatchObject({ stop: 'max-steps', limits: { maxSteps: 2, maxCostMicros: 5_000_000 }, spent: { steps: 2, outputTokens: 2 } });
    } finally {
      if (!closed) await first.close();
    }
  });
});

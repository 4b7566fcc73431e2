import { Engine } from '@openbot/engine';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { bearer, createChatFixture, eventsUntilEnd, listMessages, sendMessage } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * A Turn whose checkpoint fails after its outside calls returned (STC-05): the run is dropped,
 * its lease runs out (1 s here) and a takeover at the next generation resumes from the last
 * checkpoint, reusing the saved model and tool results instead of calling again.
 */
describe('turn recovery', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let tools: FakeToolServer;

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_LEASE_SECONDS: '1' } });
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

  it('[STC-05] a checkpoint that fails after the model and the tool answered: the takeover reuses both saved results', async () => {
    const chat = await createChatFixture(t, {
      baseUrl: fake.baseUrl,
      tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url: tools.url('/lookup'), retry: 'unsafe' }],
    });
    fake.enqueue(toolCallReply('call-1', 'lookup', ['{}'], [10, 2]), textReply(['All done'], [20, 3]));
    tools.enqueue(jsonReply(200, { modelOutput: 'result' }));
    const engine = t.app.get(Engine);
    // The checkpoints of step 1 (model) and step 2 (tool) each fail once, after their call saved its result.
    engine.faults.arm('checkpoint.before-commit', { kind: 'throw', error: new Error('injected checkpoint failure') }, { times: 2 });

    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Go');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId, 30_000);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    const view = await t.http().get(`/v1/executions/${turn.executionId}`).set('authorization', bearer(chat.secret)).expect(200);
    expect((view.body as { generation: number }).generation).toBe(3);
    // Neither the model's step-1 answer nor the unsafe tool was asked for twice.
    expect(fake.requests).toHaveLength(2);
    expect(tools.requests).toHaveLength(1);
    expect(events.filter((e) => e.type === 'model.started').map((e) => [e.step, e.attempt])).toEqual([
      [1, 1],
      [2, 1],
    ]);
    const usage = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_records WHERE execution_id = $1', [turn.executionId]);
    expect(usage[0]!.n).toBe(2);
    expect((await listMessages(t, chat.secret, chat.chatId)).map((m) => [m.role, m.content])).toEqual([
      ['user', 'Go'],
      ['tool', 'result'],
      ['assistant', 'All done'],
    ]);
  });

  it('[STC-05] the Turn end checks the Turn too: an end whose Turn is no longer the advancing one of its Chat writes no reply', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const engine = t.app.get(Engine);
    engine.faults.arm('checkpoint.before-commit', { kind: 'pause', until: held });
    fake.enqueue(textReply(['stale reply'], [3, 1]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Hi');
    await fake.waitForRequests(1);
    // Meanwhile the Chat moved on: this Turn is no longer its advancing one.
    await t.database.query('UPDATE chats SET active_turn_id = NULL WHERE id = $1', [chat.chatId]);
    release();
    expect((await eventsUntilEnd(t, chat.secret, turn.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    expect((await listMessages(t, chat.secret, chat.chatId)).map((m) => m.role)).toEqual(['user']);
  });
});

import { ManualClock } from '@openbot/engine';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, waitForEvent } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

const clock = new ManualClock();

/** The Turn reads the time from the engine's clock, so a test clock drives its time limit. */
describe('turn clock', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;

  beforeAll(async () => {
    t = await startTestApp({ clock });
    fake = await FakeOpenAiServer.start();
  });
  afterAll(async () => {
    await fake?.close();
    await t?.close();
  });

  it('injectable clock (the base of TASK-03): a test clock moved past maxSeconds ends the Turn with timeout, without waiting the hour', async () => {
    const chat = await createChatFixture(t, {
      baseUrl: fake.baseUrl,
      tools: [{ name: 'ask_user', description: 'Asks the user', parameters: { type: 'object' } }],
      limits: { maxSeconds: 3600 },
    });
    fake.enqueue(toolCallReply('c1', 'ask_user', ['{}'], [5, 1]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'wait for me');
    await waitForEvent(t, chat.secret, turn.executionId, 'tool.called');
    // An hour and a second pass on the engine's clock; the answer then wakes the Turn, whose
    // next decision sees the limit passed (real time moved only milliseconds).
    clock.advance(3601 * 1000);
    await t.http().post(`/v1/chats/${chat.chatId}/tool-outputs`).set('authorization', bearer(chat.secret)).send({ callId: 'c1', output: 'late' }).expect(202);
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'failed', category: 'timeout' });
    // The model was asked once: the answer came after the limit, so no second step ran.
    expect(fake.requests).toHaveLength(1);
  });

  it('[TASK-03] a wait for a rate limit does not count toward maxSeconds: an hour on the clock during the wait leaves the Turn its time', async () => {
    // Timers fire by the database's clock: this test starts with the engine clock at the real time.
    clock.set(Date.now());
    const tools = await FakeToolServer.start();
    try {
      const chat = await createChatFixture(t, {
        baseUrl: fake.baseUrl,
        tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url: tools.url('/lookup'), retry: 'safe' }],
        limits: { maxSeconds: 60 },
      });
      // 6,000 tokens a minute: the first answer's 6,705 confirmed tokens overdraw the bucket by about 7 s
      // of refill, so the second step waits long enough to be seen waiting on a loaded machine.
      const limit = await t.http().post('/v1/rate-limits').set('authorization', bearer(chat.secret)).send({ scope: { kind: 'bot', id: chat.botId }, tokensPerMinute: 6_000 }).expect(201);
      tools.fallback = jsonReply(200, { modelOutput: 'data' });
      fake.enqueue(toolCallReply('c1', 'lookup', ['{}'], [5, 6_700]), textReply(['after the wait'], [5, 5]));
      clock.set(Date.now());
      const turn = await sendMessage(t, chat.secret, chat.chatId, 'use the bucket up');
      // The second model step was refused by the bucket and its wait is saved.
      const waiting = async () =>
        (
          await t.database.query(
            `SELECT 1 FROM executions e WHERE e.id = $1 AND e.state = 'waiting'
                AND EXISTS (SELECT 1 FROM execution_calls c WHERE c.execution_id = e.id AND c.kind = 'model' AND c.status = 'failed')`,
            [turn.executionId],
          )
        ).length > 0;
      for (const deadline = Date.now() + 30_000; Date.now() < deadline && !(await waiting()); ) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await waiting()).toBe(true);
      // An hour passes on the engine's clock during the wait; the limit then goes, so the step's next try sends.
      clock.set(Date.now() + 3600 * 1000);
      await t.http().delete(`/v1/rate-limits/${(limit.body as { id: string }).id}`).set('authorization', bearer(chat.secret)).expect(200);
      const events = await eventsUntilEnd(t, chat.secret, turn.executionId, 40_000);
      expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed', stop: null });
      const view = await t.http().get(`/v1/executions/${turn.executionId}`).set('authorization', bearer(chat.secret)).expect(200);
      expect((view.body as { spent: { seconds: number } }).spent.seconds).toBeLessThan(60);
    } finally {
      await tools.close();
    }
  });
});

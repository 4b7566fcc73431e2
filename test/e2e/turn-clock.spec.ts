import { Global, Module } from '@nestjs/common';
import { ManualClock } from '@openbot/engine';
import { ENGINE_CLOCK } from '@openbot/openbot';
import { FakeOpenAiServer, toolCallReply } from '../fakes/fake-openai-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, waitForEvent } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

const clock = new ManualClock();

@Global()
@Module({ providers: [{ provide: ENGINE_CLOCK, useValue: clock }], exports: [ENGINE_CLOCK] })
class TestClockModule {}

/** The Turn reads the time from the engine's clock, so a test clock drives its time limit. */
describe('turn clock', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;

  beforeAll(async () => {
    t = await startTestApp({ imports: [TestClockModule] });
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
});

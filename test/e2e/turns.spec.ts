import { textReply, FakeOpenAiServer } from '../fakes/fake-openai-server';
import { createChatFixture, eventsUntilEnd, eventTypes, listMessages, replyText, sendMessage, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

describe('turns', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let chat: ChatFixture;

  beforeAll(async () => {
    t = await startTestApp();
    fake = await FakeOpenAiServer.start();
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  beforeEach(async () => {
    chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
  });

  it('[FW-01] a message starts a Turn whose execution streams the reply and commits it with its end', async () => {
    fake.enqueue(textReply(['Hel', 'lo ', 'there'], [12, 3]));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Hi');
    expect(admitted.admission).toBe('started');
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
    expect(eventTypes(events)).toEqual(['model.started', 'text.delta', 'model.completed', 'execution.ended']);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(replyText(events)).toBe('Hello there');
    const messages = await listMessages(t, chat.secret, chat.chatId);
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Hi'],
      ['assistant', 'Hello there'],
    ]);
  });
});

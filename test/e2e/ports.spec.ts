import { FakeAnthropicServer, textReply as anthropicText } from '../fakes/fake-anthropic-server';
import { FakeOpenAiServer, textReply as openAiText } from '../fakes/fake-openai-server';
import { bearer, createChatFixture, eventsUntilEnd, listMessages, sendMessage } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Adapters behind ports can be replaced (ARCH-04): the Turn reaches a language model only through
 * the model port, so a Bot moved from one provider adapter to another keeps its Chat going with no
 * other change. (The object-store port is swapped in test/e2e/files.spec.ts, which runs the same
 * file routes on the filesystem and the S3 adapter.)
 */
describe('replaceable adapters', () => {
  let t: TestApp;
  let openai: FakeOpenAiServer;
  let anthropic: FakeAnthropicServer;

  beforeAll(async () => {
    t = await startTestApp();
    openai = await FakeOpenAiServer.start();
    anthropic = await FakeAnthropicServer.start();
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([openai?.close(), anthropic?.close()]);
  });

  it('[ARCH-04] a Bot moved from an OpenAI-compatible provider to an Anthropic one: the next Turn of the same Chat runs on the other adapter, with the same history', async () => {
    const chat = await createChatFixture(t, { baseUrl: openai.baseUrl });
    const auth = bearer(chat.secret);
    openai.enqueue(openAiText(['First answer.']));
    const first = await sendMessage(t, chat.secret, chat.chatId, 'Hello');
    expect((await eventsUntilEnd(t, chat.secret, first.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    expect(openai.requests).toHaveLength(1);

    // The swap is data, not code: another provider of another kind, and the Bot names it.
    await t.http().post('/v1/model-providers').set('authorization', auth).send({ name: 'claude', kind: 'anthropic', baseUrl: anthropic.baseUrl }).expect(201);
    await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', auth).send({ model: 'claude/claude-test' }).expect(200);
    anthropic.enqueue(anthropicText(['Second answer.']));
    const second = await sendMessage(t, chat.secret, chat.chatId, 'Again');
    expect((await eventsUntilEnd(t, chat.secret, second.executionId)).at(-1)).toMatchObject({ state: 'completed' });

    // The other adapter spoke its own wire format and got the Chat's history from the same Turn code.
    expect(openai.requests).toHaveLength(1);
    expect(anthropic.requests).toHaveLength(1);
    const body = anthropic.requests[0]!.body as { model: string; messages: Array<{ role: string; content: unknown }> };
    expect(body.model).toBe('claude-test');
    expect(body.messages.map((m) => [m.role, JSON.stringify(m.content)])).toEqual([
      ['user', expect.stringContaining('Hello')],
      ['assistant', expect.stringContaining('First answer.')],
      ['user', expect.stringContaining('Again')],
    ]);
    expect((await listMessages(t, chat.secret, chat.chatId)).map((m) => [m.role, m.content])).toEqual([
      ['user', 'Hello'],
      ['assistant', 'First answer.'],
      ['user', 'Again'],
      ['assistant', 'Second answer.'],
    ]);
  });
});

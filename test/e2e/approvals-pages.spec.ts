import { chunks, FakeOpenAiServer, streamReply } from '../fakes/fake-openai-server';
import { bearer, createChatFixture, sendMessage, waitForEvent } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/** `GET /v1/approvals` pages newest first (decision 025): descending UUIDv7 IDs, `next` continues with older ones. */
describe('approval pages', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;

  beforeAll(async () => {
    t = await startTestApp();
    model = await FakeOpenAiServer.start();
  });
  afterAll(async () => {
    await model?.close();
    await t?.close();
  });

  it('lists approvals newest first in pages: next continues with older ones until null; a bad filter is 400 on its field', async () => {
    const chat = await createChatFixture(t, {
      baseUrl: model.baseUrl,
      tools: [{ name: 'pay', description: 'Pays', parameters: { type: 'object' }, approval: 'always' }],
    });
    const calls = ['call_a', 'call_b', 'call_c'];
    model.enqueue(
      streamReply([chunks.role(), ...calls.flatMap((id, i) => [chunks.toolCallStart(i, id, 'pay'), chunks.toolCallArgs(i, '{}')]), chunks.finish('tool_calls'), chunks.usage(5, 1)]),
    );
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay three times');
    await waitForEvent(t, chat.secret, turn.executionId, 'approval.requested');
    const page = async (query: string) =>
      (await t.http().get(`/v1/approvals?executionId=${turn.executionId}&limit=2${query}`).set('authorization', bearer(chat.secret)).expect(200)).body as {
        data: Array<{ id: string; callId: string }>;
        next: string | null;
      };
    const first = await page('');
    // Requested in the order of the calls: the newest is the last call's.
    expect(first.data.map((a) => a.callId)).toEqual(['call_c', 'call_b']);
    expect(first.next).toBe(first.data[1]!.id);
    const second = await page(`&after=${first.next}`);
    expect(second).toEqual({ data: [expect.objectContaining({ callId: 'call_a' })], next: null });
    const ids = [...first.data, ...second.data].map((a) => a.id);
    expect(ids).toEqual([...ids].sort().reverse());

    const bad = await t.http().get('/v1/approvals?state=maybe&chatId=nope').set('authorization', bearer(chat.secret)).expect(400);
    expect(JSON.stringify(bad.body)).toContain('state');
    expect(JSON.stringify(bad.body)).toContain('chatId');
  });
});

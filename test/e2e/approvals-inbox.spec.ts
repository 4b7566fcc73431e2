import { chunks, FakeOpenAiServer, streamReply, textReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, waitForEvent } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * A decision reaches the running tool phase at once (decision 025): while a step's other call is
 * still running, the phase listens on its inbox and starts the approved call right away, instead
 * of waiting for the running call to finish first.
 */
describe('a decision while the step still runs', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;

  beforeAll(async () => {
    t = await startTestApp();
    [model, tools] = await Promise.all([FakeOpenAiServer.start(), FakeToolServer.start()]);
  });
  afterAll(async () => {
    await Promise.all([model?.close(), tools?.close()]);
    await t?.close();
  });

  it('[FW-02] the approved call is sent while the step\'s other call is still running: the running call is answered only after the approved one arrived', async () => {
    const chat = await createChatFixture(t, {
      baseUrl: model.baseUrl,
      tools: [
        { name: 'pay', description: 'Pays', parameters: { type: 'object' }, kind: 'http', url: tools.url('/pay'), approval: 'always' },
        { name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url: tools.url('/lookup'), retry: 'safe' },
      ],
    });
    model.enqueue(
      streamReply([
        chunks.role(),
        chunks.toolCallStart(0, 'call_pay', 'pay'),
        chunks.toolCallArgs(0, '{"amount":3}'),
        chunks.toolCallStart(1, 'call_look', 'lookup'),
        chunks.toolCallArgs(1, '{}'),
        chunks.finish('tool_calls'),
        chunks.usage(5, 1),
      ]),
      textReply(['Both done.'], [5, 1]),
    );
    // The lookup is answered only once the approved pay was sent: a phase that waited for the
    // lookup before taking the decision would never get there.
    tools.enqueue(async (res) => {
      await tools.waitForRequests(2);
      await jsonReply(200, { modelOutput: 'looked up' })(res);
    });
    tools.fallback = jsonReply(200, { modelOutput: 'paid 3' });

    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay 3 and look up');
    await waitForEvent(t, chat.secret, turn.executionId, 'approval.requested');
    await tools.waitForRequests(1);
    expect(tools.requests.map((r) => r.path)).toEqual(['/lookup']);
    expect((await t.http().get(`/v1/executions/${turn.executionId}`).set('authorization', bearer(chat.secret)).expect(200)).body).toMatchObject({ state: 'running' });
    const [approval] = ((await t.http().get(`/v1/approvals?executionId=${turn.executionId}`).set('authorization', bearer(chat.secret)).expect(200)).body as { data: Array<{ id: string }> }).data;
    await t.http().post(`/v1/approvals/${approval!.id}/decision`).set('authorization', bearer(chat.secret)).send({ decision: 'approve' }).expect(200);

    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(tools.requests.map((r) => r.path)).toEqual(['/lookup', '/pay']);
    const at = (type: string, callId: string) => events.findIndex((e) => e.type === type && e.callId === callId);
    // Sent before the running call had its result, and announced once.
    expect(at('tool.called', 'call_pay')).toBeLessThan(at('tool.result', 'call_look'));
    expect(events.filter((e) => e.type === 'tool.called' && e.callId === 'call_pay')).toHaveLength(1);
    const prompt = (model.requests[1]!.body as { messages: Array<{ role: string; tool_call_id?: string; content: string | null }> }).messages;
    expect(prompt.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content])).toEqual([
      ['call_pay', 'paid 3'],
      ['call_look', 'looked up'],
    ]);
  });
});

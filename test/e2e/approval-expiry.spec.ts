import { ManualClock } from '@openbot/engine';
import { chunks, FakeOpenAiServer, streamReply, textReply } from '../fakes/fake-openai-server';
import { FakeToolServer } from '../fakes/fake-tool-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, waitForEvent } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

const clock = new ManualClock();

/** Approval expiry on the engine's clock (decision 025): a test clock drives it without waiting the hour. */
describe('approval expiry', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;

  beforeAll(async () => {
    t = await startTestApp({ clock });
    [model, tools] = await Promise.all([FakeOpenAiServer.start(), FakeToolServer.start()]);
  });
  afterAll(async () => {
    await Promise.all([model?.close(), tools?.close()]);
    await t?.close();
  });

  it('[FW-02] an approval outliving its Turn\'s other work expires: the model gets an error tool result, the call is never sent, and a late decision is 409', async () => {
    const chat = await createChatFixture(t, {
      baseUrl: model.baseUrl,
      tools: [
        { name: 'pay', description: 'Pays', parameters: { type: 'object' }, kind: 'http', url: tools.url('/pay'), approval: 'always', approvalExpiresInSeconds: 3600 },
        { name: 'ask_user', description: 'Asks the user', parameters: { type: 'object' } },
      ],
      limits: { maxSeconds: 86_400 },
    });
    model.enqueue(
      streamReply([chunks.role(), chunks.toolCallStart(0, 'call_pay', 'pay'), chunks.toolCallArgs(0, '{}'), chunks.toolCallStart(1, 'call_ask', 'ask_user'), chunks.toolCallArgs(1, '{}'), chunks.finish('tool_calls'), chunks.usage(5, 2)]),
      textReply(['The payment was not approved in time.']),
    );
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay and ask');
    await waitForEvent(t, chat.secret, turn.executionId, 'tool.called');
    const list = await t.http().get(`/v1/approvals?executionId=${turn.executionId}`).set('authorization', bearer(chat.secret)).expect(200);
    const approval = (list.body as { data: Array<{ id: string; expiresAt: string; requestedAt: string }> }).data[0]!;
    expect(new Date(approval.expiresAt).getTime() - new Date(approval.requestedAt).getTime()).toBe(3600 * 1000);

    // An hour and a second pass on the engine's clock; the client output wakes the Turn, which then finds the approval expired.
    clock.advance(3601 * 1000);
    await t.http().post(`/v1/chats/${chat.chatId}/tool-outputs`).set('authorization', bearer(chat.secret)).send({ callId: 'call_ask', output: 'yes' }).expect(202);
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(events.find((e) => e.type === 'approval.decided')).toMatchObject({ approvalId: approval.id, decision: 'expire' });
    expect(events.find((e) => e.type === 'tool.result' && e.callId === 'call_pay')).toMatchObject({ isError: true });
    expect(events.filter((e) => e.type === 'tool.called').map((e) => e.callId)).toEqual(['call_ask']);
    const messages = (model.requests[1]!.body as { messages: Array<{ role: string; tool_call_id?: string; content: string }> }).messages.filter((m) => m.role === 'tool');
    expect(messages.map((m) => m.tool_call_id)).toEqual(['call_pay', 'call_ask']);
    expect(messages[0]!.content).toContain('expired');
    expect(tools.requests).toHaveLength(0);

    const read = await t.http().get(`/v1/approvals/${approval.id}`).set('authorization', bearer(chat.secret)).expect(200);
    expect(read.body).toMatchObject({ state: 'expired', decidedBy: null });
    const late = await t.http().post(`/v1/approvals/${approval.id}/decision`).set('authorization', bearer(chat.secret)).send({ decision: 'approve' }).expect(409);
    expect(late.body).toMatchObject({ type: 'ApprovalAlreadyDecided' });
    // The expiry is in the audit log, by the platform, like every decision.
    const audit = await t.http().get('/v1/audit-events?limit=200').set('authorization', bearer(chat.secret)).expect(200);
    const records = (audit.body as { data: Array<{ action: string; actor: { kind: string }; target: { id: string } }> }).data.filter((e) => e.target.id === approval.id);
    expect(records.map((e) => [e.action, e.actor.kind])).toEqual([['approval.expired', 'platform']]);
  });
});

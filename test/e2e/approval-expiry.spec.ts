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

  it("[APPR-01] each Turn closes only its own due request, one at a time and with no global scan: another Turn's request, past due as well, stays pending until that Turn looks at it", async () => {
    const toolsOf = () => [
      { name: 'pay', description: 'Pays', parameters: { type: 'object' }, kind: 'http', url: tools.url('/pay'), approval: 'always', approvalExpiresInSeconds: 60 },
      { name: 'ask_user', description: 'Asks the user', parameters: { type: 'object' } },
    ];
    const first = await createChatFixture(t, { baseUrl: model.baseUrl, tools: toolsOf(), limits: { maxSeconds: 86_400 } });
    const second = await createChatFixture(t, { baseUrl: model.baseUrl, tools: toolsOf(), limits: { maxSeconds: 86_400 } });
    const payAndAsk = (suffix: string) =>
      streamReply([chunks.role(), chunks.toolCallStart(0, `call_pay_${suffix}`, 'pay'), chunks.toolCallArgs(0, '{}'), chunks.toolCallStart(1, `call_ask_${suffix}`, 'ask_user'), chunks.toolCallArgs(1, '{}'), chunks.finish('tool_calls'), chunks.usage(5, 2)]);
    model.enqueue(payAndAsk('a'));
    const turnA = await sendMessage(t, first.secret, first.chatId, 'Pay and ask');
    await waitForEvent(t, first.secret, turnA.executionId, 'tool.called');
    model.enqueue(payAndAsk('b'));
    const turnB = await sendMessage(t, second.secret, second.chatId, 'Pay and ask');
    await waitForEvent(t, second.secret, turnB.executionId, 'tool.called');
    const stateOf = async (executionId: string): Promise<string> =>
      ((await t.database.query<{ state: string }>('SELECT state FROM approvals WHERE execution_id = $1', [executionId]))[0]!).state;

    // Both requests are past due on the engine's clock; only Turn A looks (its client output wakes it).
    clock.advance(61 * 1000);
    model.enqueue(textReply(['A: not approved in time.']));
    await t.http().post(`/v1/chats/${first.chatId}/tool-outputs`).set('authorization', bearer(first.secret)).send({ callId: 'call_ask_a', output: 'ok' }).expect(202);
    expect((await eventsUntilEnd(t, first.secret, turnA.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    expect(await stateOf(turnA.executionId)).toBe('expired');
    // Nothing scanned the other Turn's request: it is still pending, though past due, and its Turn has not ended.
    expect(await stateOf(turnB.executionId)).toBe('pending');
    expect(['running', 'waiting']).toContain((await t.database.query<{ state: string }>('SELECT state FROM executions WHERE id = $1', [turnB.executionId]))[0]!.state);

    // Its own Turn closes it when it looks.
    model.enqueue(textReply(['B: not approved in time.']));
    await t.http().post(`/v1/chats/${second.chatId}/tool-outputs`).set('authorization', bearer(second.secret)).send({ callId: 'call_ask_b', output: 'ok' }).expect(202);
    expect((await eventsUntilEnd(t, second.secret, turnB.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    expect(await stateOf(turnB.executionId)).toBe('expired');
    expect(tools.requests).toHaveLength(0);
  });
});

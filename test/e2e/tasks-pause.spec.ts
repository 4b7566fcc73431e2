import { ManualClock } from '@openbot/engine';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, hangReply, jsonReply } from '../fakes/fake-tool-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, waitForEvent, type ChatFixture, type EventBody } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';

const clock = new ManualClock();

const SECOND = 1000;

/**
 * Pause, resume and the time a Turn counts (TASK-01..03): the engine's test clock moves time, so
 * limits are exercised without waiting; the HTTP API is what a user drives.
 */
describe('pause, resume and counted time', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;

  beforeAll(async () => {
    t = await startTestApp({ clock });
  });
  afterAll(async () => {
    await Promise.all([model?.close(), tools?.close()]);
    await t?.close();
  });
  beforeEach(async () => {
    await Promise.all([model?.close(), tools?.close()]);
    [model, tools] = await Promise.all([FakeOpenAiServer.start(), FakeToolServer.start()]);
  });

  const ask = { name: 'ask_user', description: 'Asks the user', parameters: { type: 'object' } };
  const pay = () => ({ name: 'pay', description: 'Pays', parameters: { type: 'object' }, kind: 'http', url: tools.url('/pay'), approval: 'always' });
  const post = (chat: ChatFixture, path: string) => t.http().post(path).set('authorization', bearer(chat.secret)).send({});
  const answer = (chat: ChatFixture, callId: string) =>
    t.http().post(`/v1/chats/${chat.chatId}/tool-outputs`).set('authorization', bearer(chat.secret)).send({ callId, output: 'yes' }).expect(202);
  const approvalOf = async (chat: ChatFixture, executionId: string): Promise<string> => {
    await waitForEvent(t, chat.secret, executionId, 'approval.requested');
    const res = await t.http().get(`/v1/approvals?executionId=${executionId}`).set('authorization', bearer(chat.secret)).expect(200);
    return (res.body as { data: Array<{ id: string }> }).data[0]!.id;
  };

  it('[TASK-03] waiting for an approval does not count: an hour-long approval wait does not end a Turn limited to a minute', async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [pay()], limits: { maxSeconds: 60 } });
    tools.fallback = jsonReply(200, { modelOutput: 'paid' });
    model.enqueue(toolCallReply('call_pay', 'pay', ['{}'], [5, 1]), textReply(['Paid.']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay');
    const approval = await approvalOf(chat, turn.executionId);
    await waitForExecutionState(t, chat.secret, turn.executionId, 'waiting');
    clock.advance(3600 * SECOND);
    await t.http().post(`/v1/approvals/${approval}/decision`).set('authorization', bearer(chat.secret)).send({ decision: 'approve' }).expect(200);
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(tools.requests).toHaveLength(1);
  });

  it("[TASK-02] a pause and a resume show in the Turn's event stream: one `execution.paused`, then one `execution.resumed`, in order with its other events", async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [ask] });
    model.enqueue(toolCallReply('c1', 'ask_user', ['{}'], [5, 1]), textReply(['Thanks.']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'ask me');
    await waitForEvent(t, chat.secret, turn.executionId, 'tool.called');
    // Repeating a pause or a resume changes nothing, and adds no event.
    await post(chat, `/v1/executions/${turn.executionId}/pause`).expect(202);
    await post(chat, `/v1/executions/${turn.executionId}/pause`).expect(202);
    const whilePaused = await waitForEvent(t, chat.secret, turn.executionId, 'execution.paused');
    expect(whilePaused.at(-1)).toMatchObject({ type: 'execution.paused', seq: whilePaused.length, at: expect.any(String) });
    await post(chat, `/v1/executions/${turn.executionId}/resume`).expect(202);
    await post(chat, `/v1/executions/${turn.executionId}/resume`).expect(202);
    await answer(chat, 'c1');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.filter((e) => e.type.startsWith('execution.')).map((e) => e.type)).toEqual(['execution.paused', 'execution.resumed', 'execution.ended']);
    const order = events.map((e) => e.type).filter((type) => ['tool.called', 'execution.paused', 'execution.resumed', 'tool.result'].includes(type));
    expect(order).toEqual(['tool.called', 'execution.paused', 'execution.resumed', 'tool.result']);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
  });

  it('[TASK-03] a paused Turn\'s time does not count, and the time before and after the pause adds up', async () => {
    // 20 s, a paused hour, 20 s: 40 s of a 60 s limit.
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [ask], limits: { maxSeconds: 60 } });
    model.enqueue(toolCallReply('c1', 'ask_user', ['{}'], [5, 1]), textReply(['Thanks.']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'ask me');
    await waitForEvent(t, chat.secret, turn.executionId, 'tool.called');
    clock.advance(20 * SECOND);
    const paused = await post(chat, `/v1/executions/${turn.executionId}/pause`).expect(202);
    expect(paused.body).toEqual({ id: turn.executionId, state: 'waiting', paused: true });
    expect((await t.http().get(`/v1/executions/${turn.executionId}`).set('authorization', bearer(chat.secret)).expect(200)).body).toMatchObject({ paused: true });
    clock.advance(3600 * SECOND);
    expect((await post(chat, `/v1/executions/${turn.executionId}/resume`).expect(202)).body).toMatchObject({ id: turn.executionId, paused: false });
    clock.advance(20 * SECOND);
    // The view counts the same: 40 s spent of the 60 s the saved limits allow.
    const view = await t.http().get(`/v1/executions/${turn.executionId}`).set('authorization', bearer(chat.secret)).expect(200);
    expect(view.body).toMatchObject({
      paused: false,
      limits: { maxSteps: 16, maxSeconds: 60, maxOutputTokens: 200_000, maxCostMicros: null },
      spent: { steps: 1, seconds: 40, outputTokens: 1 },
      stop: null,
    });
    await answer(chat, 'c1');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });

    // The same with 40 s before and 21 s after the pause: 61 s of 60 is past the limit.
    model.enqueue(toolCallReply('c2', 'ask_user', ['{}'], [5, 1]), textReply(['never']));
    const late = await sendMessage(t, chat.secret, chat.chatId, 'ask me again');
    await waitForEvent(t, chat.secret, late.executionId, 'tool.called');
    clock.advance(40 * SECOND);
    await post(chat, `/v1/executions/${late.executionId}/pause`).expect(202);
    clock.advance(3600 * SECOND);
    await post(chat, `/v1/executions/${late.executionId}/resume`).expect(202);
    clock.advance(21 * SECOND);
    await answer(chat, 'c2');
    const ended = await eventsUntilEnd(t, chat.secret, late.executionId);
    expect(ended.at(-1)).toMatchObject({ type: 'execution.ended', state: 'failed', category: 'timeout' });
    expect((await t.http().get(`/v1/executions/${late.executionId}`).set('authorization', bearer(chat.secret)).expect(200)).body).toMatchObject({ stop: 'max-seconds' });
  });

  it('[DLG-01] a stopped approval check leaves the Turn paused for recovery: resumed once the check works, the approved call runs once', async () => {
    // Timers fire by the database's clock: the engine clock starts at the real time here.
    clock.set(Date.now());
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [pay()] });
    tools.fallback = jsonReply(200, { modelOutput: 'paid' });
    model.enqueue(toolCallReply('call_pay', 'pay', ['{}'], [5, 1]), textReply(['Paid.']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay');
    const approval = await approvalOf(chat, turn.executionId);
    await waitForExecutionState(t, chat.secret, turn.executionId, 'waiting');
    await post(chat, `/v1/executions/${turn.executionId}/pause`).expect(202);
    await t.http().post(`/v1/approvals/${approval}/decision`).set('authorization', bearer(chat.secret)).send({ decision: 'approve' }).expect(200);
    // The approvals cannot be read while the Turn resumes: its check fails, so it neither runs nor refuses the call.
    await t.database.query('ALTER TABLE approvals RENAME TO approvals_unreadable');
    try {
      await post(chat, `/v1/executions/${turn.executionId}/resume`).expect(202);
      await waitForEvent(t, chat.secret, turn.executionId, 'turn.paused');
      const view = async () => (await t.http().get(`/v1/executions/${turn.executionId}`).set('authorization', bearer(chat.secret)).expect(200)).body as { state: string; paused: boolean };
      for (let i = 0; i < 400 && (await view()).paused !== true; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(await view()).toMatchObject({ state: 'waiting', paused: true });
    } finally {
      await t.database.query('ALTER TABLE approvals_unreadable RENAME TO approvals');
    }
    expect(tools.requests).toHaveLength(0);
    await post(chat, `/v1/executions/${turn.executionId}/resume`).expect(202);
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(events.filter((e) => e.type === 'tool.called')).toHaveLength(1);
    expect(tools.requests).toHaveLength(1);
  });

  it('[TASK-02] a review answers its own pause: a decision on a paused Turn is recorded, and the approved call runs only after the resume', async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [pay()] });
    tools.fallback = jsonReply(200, { modelOutput: 'paid' });
    model.enqueue(toolCallReply('call_pay', 'pay', ['{}'], [5, 1]), textReply(['Paid.']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay');
    const approval = await approvalOf(chat, turn.executionId);
    await waitForExecutionState(t, chat.secret, turn.executionId, 'waiting');
    await post(chat, `/v1/executions/${turn.executionId}/pause`).expect(202);
    // Repeating the pause changes nothing.
    expect((await post(chat, `/v1/executions/${turn.executionId}/pause`).expect(202)).body).toEqual({ id: turn.executionId, state: 'waiting', paused: true });
    const decided = await t.http().post(`/v1/approvals/${approval}/decision`).set('authorization', bearer(chat.secret)).send({ decision: 'approve' }).expect(200);
    expect(decided.body).toMatchObject({ state: 'approved' });
    // Recorded, but the paused Turn was not woken: it still waits, paused, and nothing was sent.
    expect((await t.http().get(`/v1/executions/${turn.executionId}`).set('authorization', bearer(chat.secret)).expect(200)).body).toMatchObject({ state: 'waiting', paused: true });
    expect(tools.requests).toHaveLength(0);
    await post(chat, `/v1/executions/${turn.executionId}/resume`).expect(202);
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(tools.requests).toHaveLength(1);
    // A final execution has nothing to pause or resume.
    expect((await post(chat, `/v1/executions/${turn.executionId}/pause`).expect(409)).body).toMatchObject({ type: 'ExecutionFinal' });
    expect((await post(chat, `/v1/executions/${turn.executionId}/resume`).expect(409)).body).toMatchObject({ type: 'ExecutionFinal' });
  });

  it('[TASK-02] pausing a Turn pauses its attached task; the task cannot be resumed while its parent is paused (409 ParentPaused); the children route lists it', async () => {
    const chat = await createChatFixture(t, {
      baseUrl: model.baseUrl,
      tools: [{ name: 'report', description: 'Builds a report', parameters: { type: 'object' }, kind: 'background', url: tools.url('/report'), retry: 'safe' }],
    });
    tools.enqueue(hangReply());
    tools.fallback = jsonReply(200, { modelOutput: 'report ready' });
    model.enqueue(toolCallReply('call_r', 'report', ['{}'], [5, 1]), textReply(['Here it is.']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Report');
    await tools.waitForRequests(1);
    const children = await t.http().get(`/v1/executions/${turn.executionId}/children`).set('authorization', bearer(chat.secret)).expect(200);
    const page = children.body as { data: Array<{ id: string; kind: string; state: string; attached: boolean; resource: { type: string; id: string } }>; next: string | null };
    expect(page).toEqual({ data: [{ id: expect.any(String), kind: 'chat.background-tool', state: 'running', attached: true, resource: { type: 'tool-call', id: 'call_r' } }], next: null });
    const task = page.data[0]!.id;

    await post(chat, `/v1/executions/${turn.executionId}/pause`).expect(202);
    await waitForExecutionState(t, chat.secret, task, 'waiting');
    expect((await t.http().get(`/v1/executions/${task}`).set('authorization', bearer(chat.secret)).expect(200)).body).toMatchObject({ paused: true });
    expect((await post(chat, `/v1/executions/${task}/resume`).expect(409)).body).toMatchObject({ type: 'ParentPaused' });

    await post(chat, `/v1/executions/${turn.executionId}/resume`).expect(202);
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ callId: 'call_r', isError: false });
    expect((await t.http().get(`/v1/executions/${task}`).set('authorization', bearer(chat.secret)).expect(200)).body).toMatchObject({ state: 'completed', paused: false });
    // The hung request was let go by the pause (an attempt cut off, not a failed call); the safe call was sent again with the same key after the resume.
    expect(tools.requests).toHaveLength(2);
    expect(new Set(tools.requests.map((r) => r.headers['idempotency-key'])).size).toBe(1);
  });
  it("[TASK-03] a task's time does not count while its parent is paused: the pause of the parent pauses the attached task, and its time before and after adds up", async () => {
    const lead = await createChatFixture(t, { baseUrl: model.baseUrl, limits: { maxSeconds: 60 } });
    const auth = bearer(lead.secret);
    const helper = ((await t.http().post('/v1/bots').set('authorization', auth).send({ name: 'Helper', model: 'fake/gpt-test', tools: [ask] }).expect(201)).body as { id: string }).id;
    await t.http().patch(`/v1/bots/${lead.botId}`).set('authorization', auth).send({ tools: [{ name: 'ask_helper', kind: 'delegate', botId: helper }] }).expect(200);
    model.enqueue(toolCallReply('d1', 'ask_helper', ['{"input":"ask them"}'], [5, 1]), toolCallReply('u1', 'ask_user', ['{}'], [5, 1]), textReply(['Asked.'], [5, 1]), textReply(['Done.'], [5, 1]));
    const turn = await sendMessage(t, lead.secret, lead.chatId, 'Delegate the question');
    const started = (await waitForEvent(t, lead.secret, turn.executionId, 'task.started')).find((e) => e.type === 'task.started') as EventBody & { executionId: string };
    const task = started.executionId;
    await waitForEvent(t, lead.secret, task, 'tool.called');
    await waitForExecutionState(t, lead.secret, task, 'waiting');

    // 20 s, an hour with the parent paused, 20 s: the task counted 40 s of the 60 it got.
    clock.advance(20 * SECOND);
    await post(lead, `/v1/executions/${turn.executionId}/pause`).expect(202);
    expect((await t.http().get(`/v1/executions/${task}`).set('authorization', auth).expect(200)).body).toMatchObject({ paused: true });
    clock.advance(3600 * SECOND);
    await post(lead, `/v1/executions/${turn.executionId}/resume`).expect(202);
    clock.advance(20 * SECOND);
    const view = await t.http().get(`/v1/executions/${task}`).set('authorization', auth).expect(200);
    expect(view.body).toMatchObject({ paused: false, limits: { maxSeconds: 60 }, spent: { seconds: 40 }, stop: null });

    const [taskChat] = await t.database.query<{ chat_id: string }>('SELECT chat_id FROM chat_turns WHERE execution_id = $1', [task]);
    await t.http().post(`/v1/chats/${taskChat!.chat_id}/tool-outputs`).set('authorization', auth).send({ callId: 'u1', output: 'yes' }).expect(202);
    const events = await eventsUntilEnd(t, lead.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(events.find((e) => e.type === 'task.ended')).toMatchObject({ executionId: task, state: 'completed' });
  });
});

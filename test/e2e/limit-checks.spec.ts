import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, waitForEvent, type EventBody } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';

/**
 * Limit checks that cannot read what they need (DLG-01, decision 035): every model call is checked
 * against saved usage and saved limits; when a read of them fails for real (a row gone, a table
 * that cannot be read), the call is not sent on an older sum or a default, and the Turn is left
 * paused for recovery. Resumed once the read works again, it checks anew and goes on.
 */
describe('limit checks that cannot read', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await Promise.all([model?.close(), tools?.close()]);
    await t?.close();
  });
  beforeEach(async () => {
    await Promise.all([model?.close(), tools?.close()]);
    [model, tools] = await Promise.all([FakeOpenAiServer.start(), FakeToolServer.start()]);
  });

  const view = async (secret: string, id: string) =>
    (await t.http().get(`/v1/executions/${id}`).set('authorization', bearer(secret)).expect(200)).body as { state: string; paused: boolean };
  const untilPaused = async (secret: string, id: string) => {
    for (let i = 0; i < 400 && (await view(secret, id)).paused !== true; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    return view(secret, id);
  };
  const modelSteps = (events: readonly EventBody[]) => events.filter((e) => e.type === 'model.started').length;

  it("[DLG-01] a task whose ancestor's saved limits cannot be read sends nothing: no cap is guessed missing, the task is left paused, and resumed once the limits are back it goes on", async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, limits: { maxCostMicros: 1_000_000 } });
    const auth = bearer(chat.secret);
    const pay = { name: 'pay', description: 'Pays', parameters: { type: 'object' }, kind: 'http', url: tools.url('/pay'), approval: 'always' };
    const helper = ((await t.http().post('/v1/bots').set('authorization', auth).send({ name: 'Helper', model: 'fake/gpt-test', tools: [pay] }).expect(201)).body as { id: string }).id;
    await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', auth).send({ tools: [{ name: 'ask_helper', kind: 'delegate', botId: helper }] }).expect(200);
    tools.fallback = jsonReply(200, { modelOutput: 'paid' });
    model.enqueue(
      toolCallReply('call_d', 'ask_helper', ['{"input":"Pay 5"}'], [5, 2]),
      toolCallReply('call_pay', 'pay', ['{}'], [5, 2]),
      textReply(['Paid.'], [5, 2]),
      textReply(['The helper paid.'], [5, 2]),
    );
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Have the helper pay');
    const started = (await waitForEvent(t, chat.secret, turn.executionId, 'task.started')).find((e) => e.type === 'task.started') as EventBody & { executionId: string };
    const task = started.executionId;
    await waitForEvent(t, chat.secret, task, 'approval.requested');
    await waitForExecutionState(t, chat.secret, task, 'waiting');
    const [approval] = ((await t.http().get(`/v1/approvals?executionId=${task}`).set('authorization', auth).expect(200)).body as { data: Array<{ id: string }> }).data;

    // The root's saved limits row goes missing while the task waits: the task's next model call
    // cannot read its ancestor's cap. Before DLG-01 a missing row read as "no cap".
    const hidden = '00000000-0000-7000-8000-00000000dead';
    expect(await t.database.query('UPDATE execution_limits SET execution_id = $2 WHERE execution_id = $1 RETURNING execution_id', [turn.executionId, hidden])).toHaveLength(1);
    try {
      await t.http().post(`/v1/approvals/${approval!.id}/decision`).set('authorization', auth).send({ decision: 'approve' }).expect(200);
      const events = await waitForEvent(t, chat.secret, task, 'turn.paused');
      expect(events.find((e) => e.type === 'turn.paused')).toMatchObject({ reason: 'limit-check-failed' });
      expect(await untilPaused(chat.secret, task)).toMatchObject({ state: 'waiting', paused: true });
      // The approved call ran; the model step after it was never sent, reserved nothing, and failed no attempt.
      expect(tools.requests).toHaveLength(1);
      expect(model.requests).toHaveLength(2);
      expect(modelSteps(events)).toBe(1);
      expect(events.filter((e) => e.type === 'model.failed')).toEqual([]);
      expect(await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_holds WHERE execution_id = $1', [task])).toEqual([{ n: 1 }]);
      // The check was tried again as new attempts of the call, each reading anew, before the pause.
      const attempts = await t.database.query<{ status: string }>(`SELECT status FROM execution_calls WHERE execution_id = $1 AND kind = 'model' ORDER BY created_at, attempt`, [task]);
      expect(attempts.map((a) => a.status)).toEqual(['succeeded', 'failed', 'failed', 'failed']);
    } finally {
      await t.database.query('UPDATE execution_limits SET execution_id = $1 WHERE execution_id = $2', [turn.executionId, hidden]);
    }
    await t.http().post(`/v1/executions/${task}/resume`).set('authorization', auth).send({}).expect(202);
    const rootEvents = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(rootEvents.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed', stop: null });
    expect(await waitForExecutionState(t, chat.secret, task, 'completed')).toMatchObject({ state: 'completed' });
    expect(model.requests).toHaveLength(4);
    expect(tools.requests).toHaveLength(1);
  });

  it('[DLG-01] a Turn whose saved usage cannot be read sends nothing: no stale sum is used, the Turn is left paused, and resumed once the usage reads again it finishes', async () => {
    const ask = { name: 'ask_user', description: 'Asks the user', parameters: { type: 'object' } };
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [ask] });
    const auth = bearer(chat.secret);
    // A budget applies, so every reservation reads the saved usage of its period.
    await t.http().post('/v1/budgets').set('authorization', auth).send({ scope: { kind: 'bot', id: chat.botId }, period: 'day', limitTokens: 1_000_000 }).expect(201);
    model.enqueue(toolCallReply('c1', 'ask_user', ['{}'], [5, 1]), textReply(['Thanks.'], [5, 1]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'ask me');
    await waitForEvent(t, chat.secret, turn.executionId, 'tool.called');
    await waitForExecutionState(t, chat.secret, turn.executionId, 'waiting');

    await t.database.query('ALTER TABLE usage_records RENAME TO usage_records_unreadable');
    try {
      await t.http().post(`/v1/chats/${chat.chatId}/tool-outputs`).set('authorization', auth).send({ callId: 'c1', output: 'yes' }).expect(202);
      // Read from the database meanwhile: the execution view and its events read the usage too.
      const parked = async () =>
        (await t.database.query<{ paused: boolean; state: string; events: number }>(
          `SELECT paused, state, (SELECT count(*)::int FROM execution_events WHERE execution_id = $1 AND type = 'turn.paused') AS events FROM executions WHERE id = $1`,
          [turn.executionId],
        ))[0]!;
      for (let i = 0; i < 400 && !((await parked()).paused && (await parked()).state === 'waiting' && (await parked()).events === 1); i++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(await parked()).toEqual({ paused: true, state: 'waiting', events: 1 });
      expect(model.requests).toHaveLength(1);
    } finally {
      await t.database.query('ALTER TABLE usage_records_unreadable RENAME TO usage_records');
    }
    const paused = await waitForEvent(t, chat.secret, turn.executionId, 'turn.paused');
    expect(paused.find((e) => e.type === 'turn.paused')).toMatchObject({ reason: 'limit-check-failed' });
    expect(modelSteps(paused)).toBe(1);
    expect(await view(chat.secret, turn.executionId)).toMatchObject({ state: 'waiting', paused: true });
    await t.http().post(`/v1/executions/${turn.executionId}/resume`).set('authorization', auth).send({}).expect(202);
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed', stop: null });
    expect(model.requests).toHaveLength(2);
    expect(events.filter((e) => e.type === 'model.failed')).toEqual([]);
    // The step that finished was checked against the usage as saved then: both calls are on the budget.
    const usage = (await t.http().get('/v1/usage?limit=10').set('authorization', auth).expect(200)).body as { data: Array<{ executionId: string }> };
    expect(usage.data.filter((r) => r.executionId === turn.executionId)).toHaveLength(2);
  });
  it('[DLG-01] a delegation whose Turn cannot read what it has spent starts no task: no cap is guessed for it, the Turn is left paused, and resumed it starts the task once', async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, limits: { maxCostMicros: 1_000_000 } });
    const auth = bearer(chat.secret);
    const helper = ((await t.http().post('/v1/bots').set('authorization', auth).send({ name: 'Helper', model: 'fake/gpt-test' }).expect(201)).body as { id: string }).id;
    // The delegate call waits for a yes, so the limit read happens when the test chooses.
    await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', auth).send({ tools: [{ name: 'ask_helper', kind: 'delegate', botId: helper, approval: 'always' }] }).expect(200);
    model.enqueue(toolCallReply('call_d', 'ask_helper', ['{"input":"Summarize"}'], [5, 2]), textReply(['Summary.'], [5, 2]), textReply(['The helper summarized.'], [5, 2]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Ask the helper');
    await waitForEvent(t, chat.secret, turn.executionId, 'approval.requested');
    await waitForExecutionState(t, chat.secret, turn.executionId, 'waiting');
    const [approval] = ((await t.http().get(`/v1/approvals?executionId=${turn.executionId}`).set('authorization', auth).expect(200)).body as { data: Array<{ id: string }> }).data;

    const tasks = async () => (await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM executions WHERE parent_id = $1', [turn.executionId]))[0]!.n;
    await t.database.query('ALTER TABLE usage_holds RENAME TO usage_holds_unreadable');
    try {
      await t.http().post(`/v1/approvals/${approval!.id}/decision`).set('authorization', auth).send({ decision: 'approve' }).expect(200);
      const parked = async () =>
        (await t.database.query<{ paused: boolean; state: string; events: number }>(
          `SELECT paused, state, (SELECT count(*)::int FROM execution_events WHERE execution_id = $1 AND type = 'turn.paused') AS events FROM executions WHERE id = $1`,
          [turn.executionId],
        ))[0]!;
      for (let i = 0; i < 400; i++) {
        const now = await parked();
        if (now.paused && now.state === 'waiting' && now.events === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(await parked()).toEqual({ paused: true, state: 'waiting', events: 1 });
      expect(await tasks()).toBe(0);
      expect(model.requests).toHaveLength(1);
    } finally {
      await t.database.query('ALTER TABLE usage_holds_unreadable RENAME TO usage_holds');
    }
    const paused = await waitForEvent(t, chat.secret, turn.executionId, 'turn.paused');
    expect(paused.find((e) => e.type === 'turn.paused')).toMatchObject({ reason: 'limit-check-failed' });
    expect(paused.filter((e) => e.type === 'task.started' || e.type === 'tool.called')).toEqual([]);
    await t.http().post(`/v1/executions/${turn.executionId}/resume`).set('authorization', auth).send({}).expect(202);
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed', stop: null });
    expect(events.filter((e) => e.type === 'task.started')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'tool.called')).toHaveLength(1);
    expect(await tasks()).toBe(1);
    expect(model.requests).toHaveLength(3);
  });
});

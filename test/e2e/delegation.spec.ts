import { Engine } from '@openbot/engine';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { bearer, eventsUntilEnd, sendMessage, waitForEvent, type EventBody } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';

/**
 * Delegation (decision 025; FW-02, IDN-02, EXE-13): a `delegate` tool starts a task, a child Turn
 * of another Bot in a Chat of its own. One fake model serves every Bot; the steps are asked in a
 * known order because each parent waits for its task.
 */
describe('delegation', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;
  let secret: string;

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_MAX_DELEGATION_DEPTH: '2' } });
    model = await FakeOpenAiServer.start();
    const org = await t.createOrganization('Delegating');
    secret = org.secret;
    await t.http().post('/v1/model-providers').set('authorization', bearer(secret)).send({ name: 'fake', kind: 'openai-compatible', baseUrl: model.baseUrl }).expect(201);
  });
  afterAll(async () => {
    await model?.close();
    await t?.close();
  });

  const bot = async (name: string, tools: unknown[] = []): Promise<string> =>
    ((await t.http().post('/v1/bots').set('authorization', bearer(secret)).send({ name, model: 'fake/m', tools }).expect(201)).body as { id: string }).id;
  const delegate = (botId: string, extra: Record<string, unknown> = {}) => ({ name: 'ask_helper', kind: 'delegate', botId, ...extra });
  const chatOf = async (botId: string): Promise<string> => ((await t.http().post('/v1/chats').set('authorization', bearer(secret)).send({ botId }).expect(201)).body as { id: string }).id;
  const get = async <T>(path: string): Promise<T> => (await t.http().get(path).set('authorization', bearer(secret)).expect(200)).body as T;
  const childrenOf = (id: string) => get<{ data: Array<{ id: string; kind: string; state: string; attached: boolean; resource: { type: string; id: string } }> }>(`/v1/executions/${id}/children`);
  const toolMessages = (index: number) =>
    (model.requests[index]!.body as { messages: Array<{ role: string; content: string }> }).messages.filter((m) => m.role === 'tool').map((m) => m.content);

  it('[FW-02] [IDN-02] [IDN-01] [EXE-13] an attached task: a child Turn of the other Bot in its own Chat, with the parent\'s remaining limits; its reply is the call\'s result, and task events are on the parent stream', async () => {
    const helper = await bot('Helper');
    const lead = await bot('Lead', [delegate(helper)]);
    model.enqueue(toolCallReply('call_d', 'ask_helper', ['{"input":"Summarize the report"}'], [5, 2]), textReply(['The report says 42.'], [5, 3]), textReply(['Helper says 42.'], [5, 3]));
    const turn = await sendMessage(t, secret, await chatOf(lead), 'Ask the helper');
    const events = await eventsUntilEnd(t, secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    const started = events.find((e) => e.type === 'task.started') as EventBody & { executionId: string };
    expect(started).toMatchObject({ callId: 'call_d', botId: helper, executionId: expect.any(String) });
    expect(events.find((e) => e.type === 'task.ended')).toMatchObject({ callId: 'call_d', executionId: started.executionId, state: 'completed' });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ callId: 'call_d', isError: false });
    // The helper got the input as its first message; the lead read the helper's reply.
    expect((model.requests[1]!.body as { messages: Array<{ role: string; content: string }> }).messages.at(-1)).toMatchObject({ role: 'user', content: 'Summarize the report' });
    expect(toolMessages(2)).toEqual(['The report says 42.']);

    const children = await childrenOf(turn.executionId);
    expect(children.data).toEqual([{ id: started.executionId, kind: 'chat.turn', state: 'completed', attached: true, resource: { type: 'turn', id: expect.any(String) } }]);
    const task = await get<{ limits: { maxSteps: number }; resource: { id: string } }>(`/v1/executions/${started.executionId}`);
    // The lead had used one of its 16 steps: the task may use at most the 15 left.
    expect(task.limits.maxSteps).toBe(15);
    const [taskChat] = await t.database.query<{ chat_id: string }>('SELECT chat_id FROM chat_turns WHERE execution_id = $1', [started.executionId]);
    expect(await get(`/v1/chats/${taskChat!.chat_id}`)).toMatchObject({ botId: helper, parentExecutionId: turn.executionId });
    // The task acts with the parent's identity and names the parent as its source execution.
    const engine = t.app.get(Engine);
    const [parentIdentity, taskIdentity] = (await Promise.all([engine.identity(turn.executionId), engine.identity(started.executionId)])) as Array<Record<string, unknown>>;
    expect(taskIdentity).toMatchObject({ owner: parentIdentity!.owner, actor: parentIdentity!.actor, token: parentIdentity!.token, sourceExecutionId: turn.executionId });
  });

  it('[EXE-13] cancel of the root cascades to every level of tasks; a delegation deeper than the limit gets an error result', async () => {
    const leaf = await bot('Leaf', [{ name: 'ask_user', description: 'Asks', parameters: { type: 'object' } }, delegate(await bot('TooDeep'))]);
    const middle = await bot('Middle', [delegate(leaf)]);
    const root = await bot('Root', [delegate(middle)]);
    model.enqueue(
      toolCallReply('d1', 'ask_helper', ['{"input":"level 1"}'], [1, 1]),
      toolCallReply('d2', 'ask_helper', ['{"input":"level 2"}'], [1, 1]),
      // The leaf (depth 2) may not delegate again: its call gets an error result; then it waits on a client tool.
      toolCallReply('d3', 'ask_helper', ['{"input":"level 3"}'], [1, 1]),
      toolCallReply('u1', 'ask_user', ['{}'], [1, 1]),
    );
    const requestsBefore = model.requests.length;
    const turn = await sendMessage(t, secret, await chatOf(root), 'Go deep');
    const [level1] = (await waitForChild(turn.executionId)).data;
    const [level2] = (await waitForChild(level1!.id)).data;
    await waitForEvent(t, secret, level2!.id, 'tool.called');
    const leafEvents = await waitForEvent(t, secret, level2!.id, 'tool.result');
    await waitForExecutionState(t, secret, level2!.id, 'waiting');
    expect(leafEvents.find((e) => e.type === 'tool.result')).toMatchObject({ callId: 'd3', isError: true });
    expect(toolMessages(requestsBefore + 3)).toEqual([expect.stringContaining('limited to 2 levels')]);
    expect((await childrenOf(level2!.id)).data).toEqual([]);

    await t.http().post(`/v1/executions/${turn.executionId}/cancel`).set('authorization', bearer(secret)).expect(202);
    const ended = await eventsUntilEnd(t, secret, turn.executionId);
    expect(ended.at(-1)).toMatchObject({ state: 'cancelled' });
    for (const id of [level1!.id, level2!.id]) expect(await waitForExecutionState(t, secret, id, 'cancelled')).toMatchObject({ state: 'cancelled' });
  });

  it("delegating to a Bot that was deleted gives an error result; another organization's Bot is 400 on botId", async () => {
    const gone = await bot('Gone');
    const lead = await bot('Lead2', [delegate(gone)]);
    await t.http().delete(`/v1/bots/${gone}`).set('authorization', bearer(secret)).expect((res) => expect([200, 204]).toContain(res.status));
    model.enqueue(toolCallReply('call_g', 'ask_helper', ['{"input":"hi"}'], [1, 1]), textReply(['It is gone.']));
    const turn = await sendMessage(t, secret, await chatOf(lead), 'Ask');
    const events = await eventsUntilEnd(t, secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ callId: 'call_g', isError: true });
    expect(events.some((e) => e.type === 'task.started')).toBe(false);
    expect(toolMessages(model.requests.length - 1)).toEqual([expect.stringContaining('no longer exists')]);

    const other = await t.createOrganization('Other');
    await t.http().post('/v1/model-providers').set('authorization', bearer(other.secret)).send({ name: 'fake', kind: 'openai-compatible', baseUrl: model.baseUrl }).expect(201);
    const refused = await t.http().post('/v1/bots').set('authorization', bearer(other.secret)).send({ name: 'Thief', model: 'fake/m', tools: [delegate(lead)] }).expect(400);
    expect(JSON.stringify(refused.body)).toContain('tools.0.botId');
  });

  it('[EXE-13] a detached task answers { executionId } at once and may outlive its parent', async () => {
    const helper = await bot('Slow', [{ name: 'ask_user', description: 'Asks', parameters: { type: 'object' } }]);
    const lead = await bot('Lead3', [delegate(helper, { attached: false })]);
    // The parent's second step and the task's first run at the same time: each is answered by who asks.
    const byAsker = (res: Parameters<ReturnType<typeof textReply>>[0]) => {
      const messages = (model.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> }).messages;
      const task = messages.some((m) => m.role === 'user' && m.content === 'take your time');
      return (task ? toolCallReply('u9', 'ask_user', ['{}'], [1, 1]) : textReply(['Started it.']))(res);
    };
    model.enqueue(toolCallReply('call_x', 'ask_helper', ['{"input":"take your time"}'], [1, 1]), byAsker, byAsker);
    const turn = await sendMessage(t, secret, await chatOf(lead), 'Start it');
    const events = await eventsUntilEnd(t, secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    const started = events.find((e) => e.type === 'task.started') as EventBody & { executionId: string };
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ callId: 'call_x', isError: false });
    const [child] = (await childrenOf(turn.executionId)).data;
    expect(child).toMatchObject({ id: started.executionId, attached: false });
    // The parent ended; the detached task still waits for its user.
    expect(await waitForExecutionState(t, secret, started.executionId, 'waiting')).toMatchObject({ state: 'waiting' });
    await t.http().post(`/v1/executions/${started.executionId}/cancel`).set('authorization', bearer(secret)).expect(202);
  });

  async function waitForChild(id: string): Promise<{ data: Array<{ id: string }> }> {
    for (let i = 0; i < 200; i++) {
      const page = await childrenOf(id);
      if (page.data.length > 0) return page;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no task under ${id}`);
  }
});

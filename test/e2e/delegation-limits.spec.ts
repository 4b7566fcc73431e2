import { Engine } from '@openbot/engine';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { bearer, eventsUntilEnd, listMessages, sendMessage, waitForEvent, type EventBody } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';

interface ExecutionLimitsBody {
  state: string;
  stop: string | null;
  limits: { maxCostMicros: number | null };
  spent: { costMicros: number; unknownCostCalls: number };
}

/**
 * Limits across a delegation tree (IDN-02, DLG-01): a task starts with what is left of its
 * parent's limits, cost included, and every model call of the tree is checked against the cap of
 * its execution and of every ancestor, from saved usage plus reservations.
 */
describe('delegation: limits, identity, notices and edge cases', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;
  let secret: string;

  beforeAll(async () => {
    // Every reservation is the input estimate plus 100 output tokens.
    t = await startTestApp({ env: { OPENBOT_MODEL_CALL_MAX_TOKENS: '100' } });
    model = await FakeOpenAiServer.start();
    tools = await FakeToolServer.start();
    secret = (await t.createOrganization('Tree')).secret;
    await t.http().post('/v1/model-providers').set('authorization', bearer(secret)).send({ name: 'fake', kind: 'openai-compatible', baseUrl: model.baseUrl }).expect(201);
    // One micro per token, input and output.
    await t.http().put(`/v1/prices/${encodeURIComponent('fake/m')}`).set('authorization', bearer(secret)).send({ inputPerMillionMicros: 1_000_000, outputPerMillionMicros: 1_000_000 }).expect(200);
  });
  afterAll(async () => {
    await tools?.close();
    await model?.close();
    await t?.close();
  });

  const lookup = () => ({ name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url: tools.url('/lookup'), retry: 'safe' });
  const bot = async (name: string, tools: unknown[], limits?: Record<string, unknown>): Promise<string> =>
    ((await t.http().post('/v1/bots').set('authorization', bearer(secret)).send({ name, model: 'fake/m', tools, ...(limits ? { limits } : {}) }).expect(201)).body as { id: string })
      .id;
  const delegate = (botId: string) => ({ name: 'ask_helper', kind: 'delegate', botId });
  const view = async (id: string) => (await t.http().get(`/v1/executions/${id}`).set('authorization', bearer(secret)).expect(200)).body as ExecutionLimitsBody;
  const onlyChild = async (id: string): Promise<string> => {
    for (let i = 0; i < 400; i++) {
      const page = (await t.http().get(`/v1/executions/${id}/children`).set('authorization', bearer(secret)).expect(200)).body as { data: Array<{ id: string }> };
      if (page.data.length > 0) return page.data[0]!.id;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`no task under ${id}`);
  };

  it('[DLG-01] [IDN-02] three levels with a cost cap at the root: the leaf spending stops the whole tree at the ceiling, each task inherits what is left, and each call is counted once', async () => {
    tools.fallback = jsonReply(200, { modelOutput: 'data' });
    const leaf = await bot('Leaf', [lookup()]);
    const middle = await bot('Middle', [lookup(), delegate(leaf)]);
    const root = await bot('Root', [lookup(), delegate(middle)], { maxCostMicros: 1000 });
    // Root and middle delegate first (20 micros each); after that every step asks for a lookup that costs 305.
    model.enqueue(toolCallReply('d1', 'ask_helper', ['{"input":"level 1"}'], [10, 10]), toolCallReply('d2', 'ask_helper', ['{"input":"level 2"}'], [10, 10]));
    model.fallback = toolCallReply('l', 'lookup', ['{}'], [5, 300]);
    const chat = ((await t.http().post('/v1/chats').set('authorization', bearer(secret)).send({ botId: root }).expect(201)).body as { id: string }).id;
    const turn = await sendMessage(t, secret, chat, 'Go deep and spend');
    const events = await eventsUntilEnd(t, secret, turn.executionId, 60_000);
    // The root ended on its cost cap, and so did every task under it.
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed', stop: 'max-cost' } satisfies Partial<EventBody>);
    const level1 = await onlyChild(turn.executionId);
    const level2 = await onlyChild(level1);
    await waitForExecutionState(t, secret, level2, 'completed');
    const [rootView, middleView, leafView] = await Promise.all([view(turn.executionId), view(level1), view(level2)]);
    expect([rootView.stop, middleView.stop, leafView.stop]).toEqual(['max-cost', 'max-cost', 'max-cost']);
    // Each task started with what its parent had left: 1000 − 20, then 980 − 20.
    expect([rootView.limits.maxCostMicros, middleView.limits.maxCostMicros, leafView.limits.maxCostMicros]).toEqual([1000, 980, 960]);

    // The usage records are the only truth: the root's tree cost is their sum, each call counted once, within the ceiling.
    const usage = (await t.http().get('/v1/usage?limit=100').set('authorization', bearer(secret)).expect(200)).body as { data: Array<{ executionId: string; costMicros: number }> };
    const costOf = (ids: string[]) => usage.data.filter((r) => ids.includes(r.executionId)).reduce((sum, r) => sum + r.costMicros, 0);
    expect(rootView.spent).toEqual({ ...rootView.spent, costMicros: costOf([turn.executionId, level1, level2]), unknownCostCalls: 0 });
    expect(middleView.spent.costMicros).toBe(costOf([level1, level2]));
    expect(leafView.spent.costMicros).toBe(costOf([level2]));
    expect(rootView.spent.costMicros).toBeLessThanOrEqual(1000);
    // The leaf spent: at least two lookups of 305 ran under the cap.
    expect(usage.data.filter((r) => r.executionId === level2).length).toBeGreaterThanOrEqual(2);
  });

  it('[IDN-01] [IDN-02] [IDN-07] a task acts as its parent\'s actor with a narrowed identity that records the delegation chain; the chain\'s original token is checked before each send', async () => {
    const helper = await bot('Asker', [{ name: 'ask_user', description: 'Asks the user', parameters: { type: 'object' } }]);
    const lead = await bot('Lead', [delegate(helper)]);
    model.enqueue(toolCallReply('d1', 'ask_helper', ['{"input":"ask them"}'], [1, 1]), toolCallReply('u1', 'ask_user', ['{}'], [1, 1]));
    model.fallback = toolCallReply('never', 'ask_user', ['{}'], [1, 1]);
    // The parent Turn runs with a key of its own, which is revoked while the task waits.
    const member = await t.http().post('/v1/members').set('authorization', bearer(secret)).send({ role: 'member' }).expect(201);
    const memberKey = (member.body as { apiKey: { secret: string } }).apiKey.secret;
    const chat = ((await t.http().post('/v1/chats').set('authorization', bearer(memberKey)).send({ botId: lead }).expect(201)).body as { id: string }).id;
    const turn = await sendMessage(t, memberKey, chat, 'Delegate it');
    const task = await onlyChild(turn.executionId);
    await waitForExecutionState(t, secret, task, 'waiting');

    const engine = t.app.get(Engine);
    const [parent, child] = (await Promise.all([engine.identity(turn.executionId), engine.identity(task)])) as Array<Record<string, unknown> & { limits: { permissions: string[] } }>;
    // Same owner, actor and original token; the task runs the helper Bot, names the hop, and may do less.
    expect(child).toMatchObject({ owner: parent!.owner, actor: parent!.actor, token: parent!.token, botId: helper, sourceExecutionId: turn.executionId, delegation: [{ botId: lead, executionId: turn.executionId }] });
    expect(parent!.limits.permissions).toContain('approvals.decide');
    expect(child!.limits.permissions).not.toContain('approvals.decide');
    expect(child!.limits.permissions.every((p) => parent!.limits.permissions.includes(p))).toBe(true);

    const requestsBefore = model.requests.length;
    const keys = (await t.http().get('/v1/api-keys').set('authorization', bearer(memberKey)).expect(200)).body as { data: Array<{ id: string }> };
    await t.http().delete(`/v1/api-keys/${keys.data[0]!.id}`).set('authorization', bearer(secret)).expect(200);
    const [taskChat] = await t.database.query<{ chat_id: string }>('SELECT chat_id FROM chat_turns WHERE execution_id = $1', [task]);
    await t.http().post(`/v1/chats/${taskChat!.chat_id}/tool-outputs`).set('authorization', bearer(secret)).send({ callId: 'u1', output: 'here you go' }).expect(202);
    // The task's next model send checks the chain's token: revoked, it stops before sending, and so does its parent.
    expect(await waitForExecutionState(t, secret, task, 'failed')).toMatchObject({ state: 'failed', category: 'forbidden' });
    const ended = await eventsUntilEnd(t, secret, turn.executionId);
    expect(ended.at(-1)).toMatchObject({ type: 'execution.ended', state: 'failed', category: 'forbidden' });
    expect(model.requests.length).toBe(requestsBefore);
  });

  it('[TASK-04] a detached task that ends after its parent Turn adds a notice to the parent Chat\'s history without starting a new Turn', async () => {
    const helper = await bot('Later', [{ name: 'ask_user', description: 'Asks the user', parameters: { type: 'object' } }]);
    const lead = await bot('Dispatcher', [{ ...delegate(helper), attached: false }]);
    // The parent's second step and the task's first run at the same time: each is answered by who asks.
    const byAsker = (res: Parameters<ReturnType<typeof textReply>>[0]) => {
      const messages = (model.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> }).messages;
      const task = messages.some((m) => m.role === 'user' && m.content === 'find the answer');
      return (task ? toolCallReply('u7', 'ask_user', ['{}'], [1, 1]) : textReply(['Started it.'], [1, 1]))(res);
    };
    model.enqueue(toolCallReply('x1', 'ask_helper', ['{"input":"find the answer"}'], [1, 1]), byAsker, byAsker);
    const chat = ((await t.http().post('/v1/chats').set('authorization', bearer(secret)).send({ botId: lead }).expect(201)).body as { id: string }).id;
    const turn = await sendMessage(t, secret, chat, 'Start it');
    expect((await eventsUntilEnd(t, secret, turn.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    const task = await onlyChild(turn.executionId);
    await waitForExecutionState(t, secret, task, 'waiting');

    // The parent's work is closed; the task finishes now.
    model.enqueue(textReply(['The answer is 42.'], [1, 1]));
    const [taskChat] = await t.database.query<{ chat_id: string }>('SELECT chat_id FROM chat_turns WHERE execution_id = $1', [task]);
    await t.http().post(`/v1/chats/${taskChat!.chat_id}/tool-outputs`).set('authorization', bearer(secret)).send({ callId: 'u7', output: 'look it up' }).expect(202);
    await waitForExecutionState(t, secret, task, 'completed');

    const messages = await listMessages(t, secret, chat);
    const notice = messages.find((m) => (m as { author?: string | null }).author === 'task');
    expect(notice).toMatchObject({ role: 'user', author: 'task', turnId: turn.turnId, content: expect.stringContaining('The answer is 42.') });
    // No Turn started for it: the Chat still has its one Turn, and none is active.
    const turns = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM chat_turns WHERE chat_id = $1', [chat]);
    expect(turns[0]!.n).toBe(1);
    expect(await t.database.query('SELECT active_turn_id FROM chats WHERE id = $1', [chat])).toEqual([{ active_turn_id: null }]);
    // The next Turn reads the notice as history.
    model.enqueue(textReply(['It said 42.'], [1, 1]));
    const next = await sendMessage(t, secret, chat, 'What did it say?');
    await eventsUntilEnd(t, secret, next.executionId);
    const prompt = (model.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> }).messages;
    expect(prompt.some((m) => m.role === 'user' && m.content.includes('The answer is 42.'))).toBe(true);
  });

  it('[EVT-03] [ERR-01] a failed task is seen by its parent through the same observe path: task.ended on the parent stream, and the tool result carries the task\'s own category and error ID', async () => {
    const helper = await bot('Slowpoke', [{ name: 'ask_user', description: 'Asks the user', parameters: { type: 'object' } }], { maxSeconds: 1 });
    const lead = await bot('Waiter', [delegate(helper)]);
    // The task waits for a user who never answers and runs out of its one second.
    model.enqueue(toolCallReply('d9', 'ask_helper', ['{"input":"wait for them"}'], [1, 1]), toolCallReply('u9', 'ask_user', ['{}'], [1, 1]), textReply(['The helper timed out.'], [1, 1]));
    const chat = ((await t.http().post('/v1/chats').set('authorization', bearer(secret)).send({ botId: lead }).expect(201)).body as { id: string }).id;
    const turn = await sendMessage(t, secret, chat, 'Ask the slow one');
    const events = await eventsUntilEnd(t, secret, turn.executionId, 30_000);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    const task = (events.find((e) => e.type === 'task.started') as EventBody & { executionId: string }).executionId;
    const taskEvents = await eventsUntilEnd(t, secret, task);
    const ended = taskEvents.at(-1) as EventBody & { errorId: string };
    expect(ended).toMatchObject({ type: 'execution.ended', state: 'failed', category: 'timeout', errorId: expect.any(String), stop: 'max-seconds' });
    expect(events.find((e) => e.type === 'task.ended')).toMatchObject({ callId: 'd9', executionId: task, state: 'failed' });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ callId: 'd9', isError: true, category: 'timeout', errorId: ended.errorId });
  });

  it('an approval pending on a task whose parent is cancelled is cancelled with it: a late decision is 409 and the call is never sent', async () => {
    const helper = await bot('Payer', [{ name: 'pay', description: 'Pays', parameters: { type: 'object' }, kind: 'http', url: tools.url('/pay'), approval: 'always' }]);
    const lead = await bot('Boss', [delegate(helper)]);
    model.enqueue(toolCallReply('d5', 'ask_helper', ['{"input":"pay them"}'], [1, 1]), toolCallReply('p5', 'pay', ['{"amount":5}'], [1, 1]));
    const chat = ((await t.http().post('/v1/chats').set('authorization', bearer(secret)).send({ botId: lead }).expect(201)).body as { id: string }).id;
    const turn = await sendMessage(t, secret, chat, 'Have it paid');
    const task = await onlyChild(turn.executionId);
    await waitForEvent(t, secret, task, 'approval.requested');
    const approvals = (await t.http().get(`/v1/approvals?executionId=${task}`).set('authorization', bearer(secret)).expect(200)).body as { data: Array<{ id: string; state: string }> };
    expect(approvals.data.map((a) => a.state)).toEqual(['pending']);
    const payRequests = () => tools.requests.filter((r) => r.path === '/pay').length;

    await t.http().post(`/v1/executions/${turn.executionId}/cancel`).set('authorization', bearer(secret)).expect(202);
    expect((await eventsUntilEnd(t, secret, turn.executionId)).at(-1)).toMatchObject({ state: 'cancelled' });
    expect(await waitForExecutionState(t, secret, task, 'cancelled')).toMatchObject({ state: 'cancelled' });
    expect((await t.http().get(`/v1/approvals/${approvals.data[0]!.id}`).set('authorization', bearer(secret)).expect(200)).body).toMatchObject({ state: 'cancelled' });
    const late = await t.http().post(`/v1/approvals/${approvals.data[0]!.id}/decision`).set('authorization', bearer(secret)).send({ decision: 'approve' });
    expect({ status: late.status, type: (late.body as { type: string }).type }).toEqual({ status: 409, type: 'ApprovalAlreadyDecided' });
    expect(payRequests()).toBe(0);
  });
});

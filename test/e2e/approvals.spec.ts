import { chunks, FakeOpenAiServer, streamReply, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply, type Reply } from '../fakes/fake-tool-server';
import { addMember, bearer, createChatFixture, eventsUntilEnd, listMessages, sendMessage, waitForEvent, type ChatFixture, type EventBody } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { startSdkServer, type TestTool } from '../fakes/mcp-test-servers';
import { waitForExecutionState } from '../support/tool-probes';

/**
 * Approvals end to end (decision 025; APPR-01, FW-02, STC-07, IDN-07, REL-02): the real app with a
 * fake model server and a fake tool endpoint, through the HTTP API a person would use.
 */

const PARAMS = { type: 'object', properties: { amount: { type: 'number' }, to: { type: 'string' } } };

interface ApprovalBody {
  id: string;
  executionId: string;
  chatId: string;
  turnId: string;
  callId: string;
  toolName: string;
  arguments: string;
  state: string;
  requestedAt: string;
  expiresAt: string | null;
  decidedAt: string | null;
  decidedBy: { kind: string; id: string } | null;
  reason: string | null;
}

/** A model step that asks for several tool calls at once. */
function toolCallsReply(calls: ReadonlyArray<readonly [id: string, name: string, args: string]>) {
  return streamReply([
    chunks.role(),
    ...calls.flatMap(([id, name, args], index) => [chunks.toolCallStart(index, id, name), chunks.toolCallArgs(index, args)]),
    chunks.finish('tool_calls'),
    chunks.usage(10, 5),
  ]);
}

/** Answers each tool request with `ran <callId>`: the request is the one just recorded (the reply is chosen synchronously). */
function echoReply(server: FakeToolServer): Reply {
  return (res) => {
    const body = server.requests.at(-1)!.body as { callId: string };
    return jsonReply(200, { modelOutput: `ran ${body.callId}` })(res);
  };
}

function toolMessages(fake: FakeOpenAiServer, index: number): Array<{ tool_call_id?: string; content?: string | null }> {
  const request = fake.requests[index];
  if (request === undefined) throw new Error(`the model got ${fake.requests.length} request(s), not ${index + 1}`);
  return (request.body as { messages: Array<{ role: string; tool_call_id?: string; content?: string | null }> }).messages
    .filter((m) => m.role === 'tool')
    .map((m) => ({ tool_call_id: m.tool_call_id, content: m.content }));
}

function indexOf(events: readonly EventBody[], type: string, match: (e: EventBody) => boolean = () => true): number {
  const i = events.findIndex((e) => e.type === type && match(e));
  if (i < 0) throw new Error(`no ${type} event in ${events.map((e) => e.type).join(', ')}`);
  return i;
}

const echoTool: TestTool = { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, handler: async (a) => ({ text: String(a.text) }) };

describe('approvals', () => {
  let t: TestApp;
  const servers: Array<{ close(): Promise<void> }> = [];
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await t?.close();
  });
  beforeEach(async () => {
    model = await FakeOpenAiServer.start();
    tools = await FakeToolServer.start();
    tools.fallback = echoReply(tools);
    servers.push(model, tools);
  });

  const pay = (approval: unknown = 'always', extra: Record<string, unknown> = {}) => ({
    name: 'pay',
    description: 'Pays money',
    parameters: PARAMS,
    kind: 'http',
    url: tools.url('/pay'),
    approval,
    ...extra,
  });
  const lookup = () => ({ name: 'lookup', description: 'Looks something up', parameters: PARAMS, kind: 'http', url: tools.url('/lookup') });
  const chatWith = (toolList: unknown[]): Promise<ChatFixture> => createChatFixture(t, { baseUrl: model.baseUrl, tools: toolList });

  const approvals = async (secret: string, query: string): Promise<ApprovalBody[]> =>
    ((await t.http().get(`/v1/approvals?${query}`).set('authorization', bearer(secret)).expect(200)).body as { data: ApprovalBody[] }).data;
  const decide = (secret: string, id: string, decision: 'approve' | 'deny', reason?: string) =>
    t.http().post(`/v1/approvals/${id}/decision`).set('authorization', bearer(secret)).send({ decision, ...(reason === undefined ? {} : { reason }) });
  const pendingOf = async (chat: ChatFixture, executionId: string, n = 1): Promise<ApprovalBody[]> => {
    await waitForEvent(t, chat.secret, executionId, 'approval.requested');
    const list = await approvals(chat.secret, `executionId=${executionId}&state=pending`);
    expect(list).toHaveLength(n);
    return list;
  };
  const toolCallIds = (): string[] => tools.requests.map((r) => (r.body as { callId: string }).callId);

  it('[APPR-01] the request, the saved tool call and the notification commit in one transaction: the approval row and approval.requested carry one transaction ID, with the Turn\'s checkpoint', async () => {
    const chat = await chatWith([pay()]);
    model.enqueue(toolCallReply('call_tx', 'pay', ['{"amount":5,"to":"bo"}'], [10, 5]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay Bo 5');
    const [approval] = await pendingOf(chat, turn.executionId);
    const [rows] = await t.database.query<{ approval: string; requested: string }>(
      `SELECT (SELECT xmin::text FROM approvals WHERE id = $2) AS approval,
              (SELECT xmin::text FROM execution_events WHERE execution_id = $1 AND type = 'approval.requested') AS requested`,
      [turn.executionId, approval!.id],
    );
    expect(rows!.requested).toBe(rows!.approval);
    // The checkpoint that saved the call committed (the failure test below shows it goes with them).
    expect((await t.database.query<{ step: number }>('SELECT step FROM executions WHERE id = $1', [turn.executionId]))[0]!.step).toBeGreaterThanOrEqual(1);
    expect(tools.requests).toHaveLength(0);
  });

  it('[APPR-01] a failure in that transaction leaves none of them: no approval, no approval.requested, no tool call sent, and the Turn fails with its cause sealed', async () => {
    const chat = await chatWith([pay()]);
    await t.database.query(`CREATE FUNCTION refuse_approval() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.chat_id = '${chat.chatId}' THEN RAISE EXCEPTION 'approval refused by the test'; END IF; RETURN NEW; END $$`);
    await t.database.query('CREATE TRIGGER refuse_approval BEFORE INSERT ON approvals FOR EACH ROW EXECUTE FUNCTION refuse_approval()');
    try {
      model.enqueue(toolCallReply('call_fail', 'pay', ['{"amount":7,"to":"cy"}'], [10, 5]), textReply(['never']));
      const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay Cy 7');
      const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
      expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'failed', category: 'internal', errorId: expect.any(String) });
      expect(events.map((e) => e.type)).not.toContain('approval.requested');
      expect(events.map((e) => e.type)).not.toContain('tool.called');
      expect(await t.database.query('SELECT 1 FROM approvals WHERE chat_id = $1', [chat.chatId])).toEqual([]);
      expect(await t.database.query(`SELECT 1 FROM execution_events WHERE execution_id = $1 AND type = 'approval.requested'`, [turn.executionId])).toEqual([]);
      expect(tools.requests).toHaveLength(0);
      // The Turn's checkpoint that would have saved the call did not commit either: its step stayed 0.
      expect(await t.database.query('SELECT step, state FROM executions WHERE id = $1', [turn.executionId])).toEqual([{ step: 0, state: 'failed' }]);
      expect(await approvals(chat.secret, `executionId=${turn.executionId}`)).toEqual([]);
    } finally {
      await t.database.query('DROP TRIGGER refuse_approval ON approvals');
      await t.database.query('DROP FUNCTION refuse_approval()');
    }
  });

  it('[APPR-01] an approval request is a durable record committed with the saved tool call and its approval.requested event, after model.completed and before any tool.called', async () => {
    const chat = await chatWith([pay()]);
    model.enqueue(toolCallReply('call_pay', 'pay', ['{"amount":', '40,"to":"ana"}'], [10, 5]), textReply(['Paid.']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay Ana 40');
    const execution = await waitForExecutionState(t, chat.secret, turn.executionId, 'waiting');
    expect(execution.state).toBe('waiting');

    const [approval] = await pendingOf(chat, turn.executionId);
    expect(approval).toEqual({
      id: expect.any(String),
      executionId: turn.executionId,
      chatId: chat.chatId,
      turnId: turn.turnId,
      callId: 'call_pay',
      toolName: 'pay',
      arguments: '{"amount":40,"to":"ana"}',
      state: 'pending',
      requestedAt: expect.any(String),
      expiresAt: null,
      decidedAt: null,
      decidedBy: null,
      reason: null,
    });
    // The record, the saved call in the Turn's checkpoint and the event are all there together.
    const saved = await t.database.query<{ approval: number; events: number }>(
      `SELECT (SELECT count(*) FROM approvals WHERE execution_id = $1)::int AS approval,
              (SELECT count(*) FROM execution_events WHERE execution_id = $1 AND type = 'approval.requested')::int AS events`,
      [turn.executionId],
    );
    expect(saved).toEqual([{ approval: 1, events: 1 }]);
    expect((await t.http().get(`/v1/approvals/${approval!.id}`).set('authorization', bearer(chat.secret)).expect(200)).body).toEqual(approval);
    // Nothing was sent before the decision.
    expect(tools.requests).toHaveLength(0);

    await decide(chat.secret, approval!.id, 'approve').expect(200);
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    const requested = indexOf(events, 'approval.requested');
    expect(events[requested]).toMatchObject({ step: 1, approvalId: approval!.id, callId: 'call_pay', name: 'pay' });
    expect(indexOf(events, 'model.completed', (e) => e.step === 1)).toBeLessThan(requested);
    expect(requested).toBeLessThan(indexOf(events, 'tool.called'));
  });

  it('[FW-02] [STC-07] the Turn keeps working while an approval waits: the step\'s other call runs at once; the approved call then runs exactly once, with its saved arguments, after approval.decided', async () => {
    const chat = await chatWith([pay(), lookup()]);
    model.enqueue(
      toolCallsReply([
        ['call_pay', 'pay', '{"amount":40,"to":"ana"}'],
        ['call_look', 'lookup', '{"to":"ana"}'],
      ]),
      textReply(['Done.']),
    );
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay Ana 40 and look her up');
    const [approval] = await pendingOf(chat, turn.executionId);
    // The other call of the step was answered while the approval waits.
    await waitForEvent(t, chat.secret, turn.executionId, 'tool.result');
    await waitForExecutionState(t, chat.secret, turn.executionId, 'waiting');
    expect(toolCallIds()).toEqual(['call_look']);
    // The next model step waits until every call of the step has its result.
    expect(model.requests).toHaveLength(1);

    // The Bot's tool changes meanwhile: the saved call keeps the saved definition.
    await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', bearer(chat.secret)).send({ tools: [pay('never', { url: tools.url('/moved') }), lookup()] }).expect(200);
    const decided = await decide(chat.secret, approval!.id, 'approve', 'fine').expect(200);
    expect(decided.body).toMatchObject({ state: 'approved', decidedBy: { kind: 'member', id: chat.memberId }, reason: 'fine', decidedAt: expect.any(String) });

    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(toolCallIds()).toEqual(['call_look', 'call_pay']);
    const payRequest = tools.requests[1]!;
    expect(payRequest.path).toBe('/pay');
    expect(payRequest.body).toEqual({ callId: 'call_pay', name: 'pay', arguments: { amount: 40, to: 'ana' } });
    const decidedAt = indexOf(events, 'approval.decided');
    expect(events[decidedAt]).toMatchObject({ approvalId: approval!.id, decision: 'approve' });
    const payCalled = events.filter((e) => e.type === 'tool.called' && e.callId === 'call_pay');
    expect(payCalled).toHaveLength(1);
    expect(decidedAt).toBeLessThan(indexOf(events, 'tool.called', (e) => e.callId === 'call_pay'));
    expect(events.filter((e) => e.type === 'tool.result' && e.callId === 'call_pay')).toHaveLength(1);
    // The model reads both results, in the order it asked for them.
    expect(toolMessages(model, 1)).toEqual([
      { tool_call_id: 'call_pay', content: 'ran call_pay' },
      { tool_call_id: 'call_look', content: 'ran call_look' },
    ]);
  });

  it('[FW-02] a denial gives the model a tool result with the reason: no tool.called, and the tool is never sent', async () => {
    const chat = await chatWith([pay()]);
    model.enqueue(toolCallReply('call_pay', 'pay', ['{"amount":9000}'], [10, 5]), textReply(['I could not pay.']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay 9000');
    const [approval] = await pendingOf(chat, turn.executionId);
    await decide(chat.secret, approval!.id, 'deny', 'too much').expect(200);
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(events.filter((e) => e.type === 'tool.called')).toHaveLength(0);
    expect(events.find((e) => e.type === 'approval.decided')).toMatchObject({ approvalId: approval!.id, decision: 'deny' });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ callId: 'call_pay', isError: true });
    expect(tools.requests).toHaveLength(0);
    const [message] = toolMessages(model, 1);
    expect(message!.content).toContain('denied');
    expect(message!.content).toContain('too much');
    expect((await listMessages(t, chat.secret, chat.chatId)).map((m) => m.role)).toEqual(['user', 'tool', 'assistant']);
  });

  it('[FW-02] two pending approvals of one step decided in reverse order: each answer goes to its own call', async () => {
    const chat = await chatWith([pay()]);
    model.enqueue(
      toolCallsReply([
        ['call_a', 'pay', '{"amount":1,"to":"a"}'],
        ['call_b', 'pay', '{"amount":2,"to":"b"}'],
      ]),
      textReply(['Done.']),
    );
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay a and b');
    const list = await pendingOf(chat, turn.executionId, 2);
    const byCall = new Map(list.map((a) => [a.callId, a]));
    // Newest first; the two were requested by the same step.
    await decide(chat.secret, byCall.get('call_b')!.id, 'approve').expect(200);
    await tools.waitForRequests(1);
    expect(toolCallIds()).toEqual(['call_b']);
    await decide(chat.secret, byCall.get('call_a')!.id, 'deny', 'not a').expect(200);
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(toolCallIds()).toEqual(['call_b']);
    expect(events.filter((e) => e.type === 'approval.decided').map((e) => [e.approvalId, e.decision])).toEqual([
      [byCall.get('call_b')!.id, 'approve'],
      [byCall.get('call_a')!.id, 'deny'],
    ]);
    const messages = toolMessages(model, 1);
    expect(messages[0]).toMatchObject({ tool_call_id: 'call_a', content: expect.stringContaining('not a') });
    expect(messages[1]).toEqual({ tool_call_id: 'call_b', content: 'ran call_b' });
  });

  it('[FW-02] approve and deny racing between two members: exactly one decision wins, the other gets 409 ApprovalAlreadyDecided; repeating the winning decision is 200 and changes nothing', async () => {
    const chat = await chatWith([pay()]);
    // An admin: an approver of the owner's Turn (decision 075).
    const other = await addMember(t, chat.organizationId, 'admin');
    model.enqueue(toolCallReply('call_pay', 'pay', ['{"amount":5}'], [10, 5]), textReply(['ok']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay 5');
    const [approval] = await pendingOf(chat, turn.executionId);
    const [first, second] = await Promise.all([decide(chat.secret, approval!.id, 'approve'), decide(other.secret, approval!.id, 'deny')]);
    const statuses = [first.status, second.status].sort();
    expect(statuses).toEqual([200, 409]);
    const loser = first.status === 409 ? first : second;
    expect(loser.body).toMatchObject({ type: 'ApprovalAlreadyDecided' });
    const winner = first.status === 200 ? first : second;
    const state = (winner.body as ApprovalBody).state;
    const again = await decide(other.secret, approval!.id, state === 'approved' ? 'approve' : 'deny', 'again').expect(200);
    expect(again.body).toEqual(winner.body);
    await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(tools.requests).toHaveLength(state === 'approved' ? 1 : 0);
    const audit = await t.http().get('/v1/audit-events?limit=200').set('authorization', bearer(chat.secret)).expect(200);
    const decisions = (audit.body as { data: Array<{ action: string; target: { id: string } }> }).data.filter((e) => e.target.id === approval!.id);
    expect(decisions.map((e) => e.action)).toEqual([state === 'approved' ? 'approval.approved' : 'approval.denied']);
  });

  it('[IDN-07] a viewer cannot decide (403), and another organization sees no approval (404)', async () => {
    const chat = await chatWith([pay()]);
    model.enqueue(toolCallReply('call_pay', 'pay', ['{"amount":5}'], [10, 5]), textReply(['ok']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay 5');
    const [approval] = await pendingOf(chat, turn.executionId);
    const viewer = await t.http().post('/v1/members').set('authorization', bearer(chat.secret)).send({ role: 'viewer' }).expect(201);
    const viewerSecret = (viewer.body as { apiKey: { secret: string } }).apiKey.secret;
    await decide(viewerSecret, approval!.id, 'approve').expect(403);
    // A viewer may read it, but its inbox lists only what it may decide: nothing (decision 075).
    expect((await t.http().get(`/v1/approvals/${approval!.id}`).set('authorization', bearer(viewerSecret)).expect(200)).body).toMatchObject({ state: 'pending' });
    expect(await approvals(viewerSecret, `chatId=${chat.chatId}`)).toEqual([]);
    const stranger = await t.createOrganization('Stranger');
    await decide(stranger.secret, approval!.id, 'approve').expect(404);
    await t.http().get(`/v1/approvals/${approval!.id}`).set('authorization', bearer(stranger.secret)).expect(404);
    expect(await approvals(stranger.secret, '')).toEqual([]);
    expect((await t.http().get(`/v1/approvals/${approval!.id}`).set('authorization', bearer(chat.secret)).expect(200)).body).toMatchObject({ state: 'pending' });
  });

  it('[IDN-07] an admin demoted to viewer cannot approve any more', async () => {
    const chat = await chatWith([pay()]);
    const other = await addMember(t, chat.organizationId, 'admin');
    model.enqueue(toolCallReply('call_pay', 'pay', ['{"amount":5}'], [10, 5]), textReply(['ok']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay 5');
    const [approval] = await pendingOf(chat, turn.executionId);
    await t.http().patch(`/v1/members/${other.memberId}`).set('authorization', bearer(chat.secret)).send({ role: 'viewer' }).expect(200);
    await decide(other.secret, approval!.id, 'approve').expect(403);
    expect(tools.requests).toHaveLength(0);
  });

  it("[IDN-07] a saved approval cannot override a revoked key: the Turn's identity is checked again before the send, and the approved call is never sent", async () => {
    const chat = await chatWith([pay()]);
    const other = await addMember(t, chat.organizationId);
    model.enqueue(toolCallReply('call_pay', 'pay', ['{"amount":5}'], [10, 5]), textReply(['ok']));
    // The Turn acts with the second member's key.
    const turn = await sendMessage(t, other.secret, chat.chatId, 'Pay 5');
    const [approval] = await pendingOf(chat, turn.executionId);
    const keys = await t.http().get('/v1/api-keys').set('authorization', bearer(other.secret)).expect(200);
    const keyId = (keys.body as { data: Array<{ id: string; name: string }> }).data.find((k) => k.name === 'second')!.id;
    await t.http().delete(`/v1/api-keys/${keyId}`).set('authorization', bearer(chat.secret)).expect((res) => expect([200, 204]).toContain(res.status));
    // The owner's yes is recorded, but it grants nothing the revoked key no longer has.
    await decide(chat.secret, approval!.id, 'approve').expect(200);
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'failed', category: 'forbidden' });
    expect(tools.requests).toHaveLength(0);
  });

  it('[STC-11] a restored host tool call finds its handler from its saved definition and runs no App discovery: the Bot moved the tool and its App changed meanwhile', async () => {
    let lists = 0;
    let appTools: TestTool[] = [echoTool];
    // Counts every tools/list answer the App server gives (discovery), whatever asks for it.
    const app = await startSdkServer({ era: 'modern', tools: () => appTools, rewrite: (body) => (body.includes('"tools":[') ? ((lists += 1), body) : body) });
    servers.push(app);
    const chat = await chatWith([pay()]);
    const auth = bearer(chat.secret);
    const registered = (await t.http().post('/v1/apps').set('authorization', auth).send({ url: app.url }).expect(201)).body as { id: string };
    const connection = (await t.http().post(`/v1/apps/${registered.id}/connections`).set('authorization', auth).send({}).expect(201)).body as { id: string };
    await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', auth).send({ tools: [pay(), { kind: 'app', connectionId: connection.id }] }).expect(200);
    model.enqueue(toolCallReply('call_pay', 'pay', ['{"amount":5,"to":"Ann"}']), textReply(['Paid.']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay Ann');
    const [approval] = await pendingOf(chat, turn.executionId);

    // While the call waits, the Bot's tool moves to another route and the App's tools change.
    await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', auth).send({ tools: [{ ...pay(), url: tools.url('/moved') }, { kind: 'app', connectionId: connection.id }] }).expect(200);
    appTools = [{ ...echoTool, description: 'echoes, changed' }];
    const listsBefore = lists;
    // The counter sees discovery: setting up the connection and the Bot's App tool listed its tools.
    expect(listsBefore).toBeGreaterThan(0);
    await decide(chat.secret, approval!.id, 'approve').expect(200);
    expect((await eventsUntilEnd(t, chat.secret, turn.executionId)).at(-1)).toMatchObject({ state: 'completed' });

    // The restored phase sent the saved definition's route, and asked the App for no tool list.
    expect(tools.requests.map((r) => [r.path, (r.body as { callId: string }).callId])).toEqual([['/pay', 'call_pay']]);
    expect(lists).toBe(listsBefore);
    expect(toolMessages(model, 1)).toEqual([{ tool_call_id: 'call_pay', content: 'ran call_pay' }]);
  });

  it('[STC-11] a restored host tool call checks current rights: its author removed while it waited, the approved call is never sent', async () => {
    const chat = await chatWith([pay()]);
    const author = await addMember(t, chat.organizationId, 'member');
    const own = (await t.http().post('/v1/chats').set('authorization', bearer(author.secret)).send({ botId: chat.botId }).expect(201)).body as { id: string };
    model.enqueue(toolCallReply('call_pay', 'pay', ['{"amount":5,"to":"Ann"}']), textReply(['Paid.']));
    const turn = await sendMessage(t, author.secret, own.id, 'Pay Ann');
    await waitForEvent(t, author.secret, turn.executionId, 'approval.requested');
    const [approval] = await approvals(chat.secret, `executionId=${turn.executionId}&state=pending`);
    await t.http().delete(`/v1/members/${author.memberId}`).set('authorization', bearer(chat.secret)).expect(200);
    // The owner may still decide; the restored call then checks the author's rights, which are gone.
    await decide(chat.secret, approval!.id, 'approve');
    const ended = await waitForExecutionState(t, chat.secret, turn.executionId, 'failed');
    expect(ended).toMatchObject({ state: 'failed', category: 'forbidden' });
    expect(tools.requests).toEqual([]);
    expect(model.requests).toHaveLength(1);
  });

  it('[FW-02] a cancelled Turn cancels its pending approvals; a late decision is 409 and runs nothing', async () => {
    const chat = await chatWith([pay()]);
    model.enqueue(toolCallReply('call_pay', 'pay', ['{"amount":5}'], [10, 5]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay 5');
    const [approval] = await pendingOf(chat, turn.executionId);
    await t.http().post(`/v1/executions/${turn.executionId}/cancel`).set('authorization', bearer(chat.secret)).expect(202);
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'cancelled' });
    expect((await t.http().get(`/v1/approvals/${approval!.id}`).set('authorization', bearer(chat.secret)).expect(200)).body).toMatchObject({ state: 'cancelled' });
    const late = await decide(chat.secret, approval!.id, 'approve').expect(409);
    expect(late.body).toMatchObject({ type: 'ApprovalAlreadyDecided' });
    expect(tools.requests).toHaveLength(0);
    // The cancel is audited, by the platform, like every decision.
    const audit = await t.http().get('/v1/audit-events?limit=200').set('authorization', bearer(chat.secret)).expect(200);
    const records = (audit.body as { data: Array<{ action: string; actor: { kind: string }; target: { id: string } }> }).data.filter((e) => e.target.id === approval!.id);
    expect(records.map((e) => [e.action, e.actor.kind])).toEqual([['approval.cancelled', 'platform']]);
  });

  it('an approval rule on the arguments: a matching call waits for a decision, another runs at once', async () => {
    const chat = await chatWith([pay({ argument: 'to', in: ['mallory'] })]);
    model.enqueue(
      toolCallsReply([
        ['call_ok', 'pay', '{"amount":1,"to":"ana"}'],
        ['call_gated', 'pay', '{"amount":1,"to":"mallory"}'],
      ]),
      textReply(['Done.']),
    );
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay both');
    const [approval] = await pendingOf(chat, turn.executionId);
    expect(approval!.callId).toBe('call_gated');
    await tools.waitForRequests(1);
    expect(toolCallIds()).toEqual(['call_ok']);
    await decide(chat.secret, approval!.id, 'deny').expect(200);
    await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(toolCallIds()).toEqual(['call_ok']);
  });

  it('the calls of one model step run concurrently, each in its own call-log entry', async () => {
    const chat = await chatWith([lookup()]);
    // The first request is answered only once the second arrived: calls answered one by one would never get there.
    const held = (): Reply => async (res) => {
      const body = tools.requests.at(-1)!.body as { callId: string };
      await tools.waitForRequests(2);
      await jsonReply(200, { modelOutput: `ran ${body.callId}` })(res);
    };
    tools.enqueue(held(), echoReply(tools));
    model.enqueue(
      toolCallsReply([
        ['call_1', 'lookup', '{"to":"a"}'],
        ['call_2', 'lookup', '{"to":"b"}'],
      ]),
      textReply(['Done.']),
    );
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Look both up');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(toolMessages(model, 1)).toEqual([
      { tool_call_id: 'call_1', content: 'ran call_1' },
      { tool_call_id: 'call_2', content: 'ran call_2' },
    ]);
    const calls = await t.database.query<{ call_key: string; kind: string; status: string }>(
      `SELECT call_key, kind, status FROM execution_calls WHERE execution_id = $1 AND kind = 'tool' ORDER BY call_key`,
      [turn.executionId],
    );
    expect(calls.map((c) => [c.call_key.replace(/^.*:tool:/, ''), c.status])).toEqual([
      ['call_1', 'succeeded'],
      ['call_2', 'succeeded'],
    ]);
  });

  it('a Bot tool with a malformed approval policy is 400 on that field', async () => {
    const org = await t.createOrganization('Policies');
    await t.http().post('/v1/model-providers').set('authorization', bearer(org.secret)).send({ name: 'fake', kind: 'openai-compatible', baseUrl: model.baseUrl }).expect(201);
    const res = await t
      .http()
      .post('/v1/bots')
      .set('authorization', bearer(org.secret))
      .send({ name: 'B', model: 'fake/m', tools: [{ ...pay({ argument: '', in: [] }), approvalExpiresInSeconds: 0 }] })
      .expect(400);
    const fields = (res.body as { issues?: Array<{ path: string }>; errors?: Array<{ path: string }> });
    expect(JSON.stringify(fields)).toContain('tools.0.approval');
    expect(JSON.stringify(fields)).toContain('approvalExpiresInSeconds');
  });
});

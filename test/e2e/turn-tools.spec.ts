import type { ServerResponse } from 'node:http';
import { chunks, FakeOpenAiServer, heldStreamReply, streamReply, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { dropReply, FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import {
  bearer,
  createChatFixture,
  eventsUntilEnd,
  listMessages,
  sendMessage,
  waitForEvent,
  type ChatFixture,
  type EventBody,
} from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { callStatuses, installEventWitness, waitForExecutionState, watchedHangReply, within } from '../support/tool-probes';

/**
 * Tools of a Turn end to end (STC-06, STC-07, STC-09, STC-11, CALL-02, CALL-03, FW-01, RES-04):
 * the real app with a fake model server and a fake tool endpoint, one pair per test so scripted
 * replies and recorded requests never leak from one test into the next.
 */

const PARAMS = { type: 'object', properties: { city: { type: 'string' } } };

interface ModelMessage {
  role: string;
  content?: string | null;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}

/** The `messages` a model request sent. */
function modelMessages(fake: FakeOpenAiServer, index: number): ModelMessage[] {
  const request = fake.requests[index];
  if (request === undefined) throw new Error(`the model got ${fake.requests.length} request(s), not ${index + 1}`);
  return (request.body as { messages: ModelMessage[] }).messages;
}

function toolMessages(fake: FakeOpenAiServer, index: number): Array<{ tool_call_id?: string; content?: string | null }> {
  return modelMessages(fake, index)
    .filter((m) => m.role === 'tool')
    .map((m) => ({ tool_call_id: m.tool_call_id, content: m.content }));
}

function types(events: readonly EventBody[]): string[] {
  return events.map((e) => e.type);
}

function indexOf(events: readonly EventBody[], type: string, match: (e: EventBody) => boolean = () => true): number {
  const i = events.findIndex((e) => e.type === type && match(e));
  if (i < 0) throw new Error(`no ${type} event in ${types(events).join(', ')}`);
  return i;
}

/** A 200 answer with a plain text body (no JSON). */
function textToolReply(text: string): (res: ServerResponse) => void {
  return (res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end(text);
  };
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

describe('turn tools', () => {
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
    servers.push(model, tools);
  });

  const chatWith = (toolList: unknown[]): Promise<ChatFixture> => createChatFixture(t, { baseUrl: model.baseUrl, tools: toolList });

  const roles = async (chat: ChatFixture): Promise<Array<[string, string]>> =>
    (await listMessages(t, chat.secret, chat.chatId)).map((m) => [m.role, m.content]);

  it('[STC-06] a model step that asks for an http tool: the model result is saved before the tool runs, the tool result is saved (call log) before tool.result is published, and the next model step sees it', async () => {
    const witness = await installEventWitness(t.database);
    try {
      const chat = await chatWith([{ name: 'get_weather', description: 'Weather of a city', parameters: PARAMS, kind: 'http', url: tools.url('/weather') }]);
      // What the database held when the tool endpoint was called.
      let atToolRequest: { calls: Array<{ call_key: string; status: string }>; events: string[] } | undefined;
      tools.enqueue(async (res) => {
        const calls = await t.database.query<{ call_key: string; status: string }>(
          `SELECT c.call_key, c.status FROM execution_calls c JOIN chat_turns t ON t.execution_id = c.execution_id WHERE t.chat_id = $1 ORDER BY c.created_at`,
          [chat.chatId],
        );
        const events = await t.database.query<{ type: string }>(
          `SELECT e.type FROM execution_events e JOIN chat_turns t ON t.execution_id = e.execution_id WHERE t.chat_id = $1 ORDER BY e.seq`,
          [chat.chatId],
        );
        atToolRequest = { calls, events: events.map((e) => e.type) };
        await jsonReply(200, { modelOutput: 'Sunny, 21 °C' })(res);
      });
      model.enqueue(toolCallReply('call_w1', 'get_weather', ['{"city":', '"Paris"}'], [10, 5]), textReply(['It is sunny.'], [20, 4]));

      const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Weather in Paris?');
      const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);

      expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
      const completed1 = indexOf(events, 'model.completed', (e) => e.step === 1);
      const called = indexOf(events, 'tool.called');
      const result = indexOf(events, 'tool.result');
      const started2 = indexOf(events, 'model.started', (e) => e.step === 2);
      expect(completed1).toBeLessThan(called);
      expect(called).toBeLessThan(result);
      expect(result).toBeLessThan(started2);
      expect(events[called]).toMatchObject({ step: 1, callId: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' });
      expect(events[result]).toMatchObject({ step: 1, callId: 'call_w1', name: 'get_weather', isError: false });
      expect(types(events).filter((type) => type.startsWith('tool.'))).toEqual(['tool.called', 'tool.result']);

      // The model result was saved (with model.completed) before the tool endpoint was called.
      expect(atToolRequest).toBeDefined();
      expect(atToolRequest!.calls.filter((c) => c.call_key.endsWith(':model'))).toEqual([expect.objectContaining({ status: 'succeeded' })]);
      expect(atToolRequest!.events).toContain('model.completed');
      expect(atToolRequest!.events).not.toContain('tool.result');

      // The tool result was in the call log when tool.result was inserted; not yet when tool.called was.
      const seen = await witness.read(admitted.executionId);
      const at = (type: string): (typeof seen)[number] => {
        const w = seen.find((s) => s.type === type);
        if (w === undefined) throw new Error(`no witness of ${type}: ${seen.map((s) => s.type).join(', ')}`);
        return w;
      };
      expect(callStatuses(at('model.completed'), ':model')).toEqual(['succeeded']);
      expect(callStatuses(at('tool.called'), ':model')).toEqual(['succeeded']);
      expect(callStatuses(at('tool.called'), ':tool:call_w1')).not.toContain('succeeded');
      expect(callStatuses(at('tool.result'), ':tool:call_w1')).toEqual(['succeeded']);

      // The endpoint got the call with its idempotency key; the next model step read the result.
      expect(tools.requests).toHaveLength(1);
      expect(tools.requests[0]).toMatchObject({ method: 'POST', path: '/weather', body: { callId: 'call_w1', name: 'get_weather', arguments: { city: 'Paris' } } });
      expect(tools.requests[0]!.headers['idempotency-key']).toEqual(expect.stringMatching(/^\S+$/));
      expect(model.requests).toHaveLength(2);
      expect(modelMessages(model, 1)).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ role: 'assistant', tool_calls: [expect.objectContaining({ id: 'call_w1', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } })] }),
          expect.objectContaining({ role: 'tool', tool_call_id: 'call_w1', content: 'Sunny, 21 °C' }),
        ]),
      );
      // The tool-call-only step has no text: no assistant message of its own.
      expect(await roles(chat)).toEqual([
        ['user', 'Weather in Paris?'],
        ['tool', 'Sunny, 21 °C'],
        ['assistant', 'It is sunny.'],
      ]);
    } finally {
      await witness.remove();
    }
  });

  it('[STC-09] tool results carry modelOutput: the model reads exactly it, the Chat shows it as the tool message', async () => {
    const chat = await chatWith([{ name: 'lookup', description: 'Looks something up', parameters: PARAMS, kind: 'http', url: tools.url('/lookup') }]);
    // The calls run concurrently: each request is answered by its call ID, whatever order they arrive in.
    const byCall: Record<string, (res: ServerResponse) => void | Promise<void>> = {
      call_json: jsonReply(200, { modelOutput: 'From modelOutput', debug: { secret: 'not for the model' } }),
      call_text: textToolReply('A plain text answer'),
      call_other: jsonReply(200, { temperature: 21 }),
    };
    tools.fallback = (res) => byCall[(tools.requests.at(-1)!.body as { callId: string }).callId]!(res);
    model.enqueue(
      toolCallsReply([
        ['call_json', 'lookup', '{"city":"A"}'],
        ['call_text', 'lookup', '{"city":"B"}'],
        ['call_other', 'lookup', '{"city":"C"}'],
      ]),
      textReply(['Done.']),
    );

    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Look it up');
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);

    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(tools.requests.map((r) => (r.body as { callId: string }).callId).sort()).toEqual(['call_json', 'call_other', 'call_text']);
    expect(toolMessages(model, 1)).toEqual([
      { tool_call_id: 'call_json', content: 'From modelOutput' },
      { tool_call_id: 'call_text', content: 'A plain text answer' },
      { tool_call_id: 'call_other', content: '{"temperature":21}' },
    ]);
    expect(JSON.stringify(model.requests[1]!.body)).not.toContain('not for the model');
    expect(await roles(chat)).toEqual([
      ['user', 'Look it up'],
      ['tool', 'From modelOutput'],
      ['tool', 'A plain text answer'],
      ['tool', '{"temperature":21}'],
      ['assistant', 'Done.'],
    ]);
  });

  it('[STC-09] a legacy `content` field is never read: beside modelOutput it is dropped, alone it is only part of the raw answer; a later Turn replays the saved modelOutput unchanged', async () => {
    const chat = await chatWith([{ name: 'lookup', description: 'Looks something up', parameters: PARAMS, kind: 'http', url: tools.url('/lookup') }]);
    const byCall: Record<string, (res: ServerResponse) => void | Promise<void>> = {
      call_both: jsonReply(200, { content: 'LEGACY beside', modelOutput: 'From modelOutput' }),
      call_legacy: jsonReply(200, { content: 'LEGACY alone' }),
    };
    tools.fallback = (res) => byCall[(tools.requests.at(-1)!.body as { callId: string }).callId]!(res);
    model.enqueue(
      toolCallsReply([
        ['call_both', 'lookup', '{"city":"A"}'],
        ['call_legacy', 'lookup', '{"city":"B"}'],
      ]),
      textReply(['Done.']),
      textReply(['Again.']),
    );

    const first = await sendMessage(t, chat.secret, chat.chatId, 'Look it up');
    expect((await eventsUntilEnd(t, chat.secret, first.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    const answered = [
      { tool_call_id: 'call_both', content: 'From modelOutput' },
      // No `content` means no modelOutput: the whole answer is the result, never its `content` read out.
      { tool_call_id: 'call_legacy', content: '{"content":"LEGACY alone"}' },
    ];
    expect(toolMessages(model, 1)).toEqual(answered);
    expect(JSON.stringify(model.requests[1]!.body)).not.toContain('LEGACY beside');

    // A later Turn replays what was saved, exactly: nothing rewrote it from a `content` field.
    const second = await sendMessage(t, chat.secret, chat.chatId, 'And again');
    expect((await eventsUntilEnd(t, chat.secret, second.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    expect(toolMessages(model, 2)).toEqual(answered);
    expect(JSON.stringify(model.requests[2]!.body)).not.toContain('LEGACY beside');
    expect(await roles(chat)).toEqual([
      ['user', 'Look it up'],
      ['tool', 'From modelOutput'],
      ['tool', '{"content":"LEGACY alone"}'],
      ['assistant', 'Done.'],
      ['user', 'And again'],
      ['assistant', 'Again.'],
    ]);
  });

  it('[CALL-02] a safe http tool that answers 503 is retried with the same Idempotency-Key until it succeeds', async () => {
    const chat = await chatWith([{ name: 'reserve', description: 'Reserves', parameters: PARAMS, kind: 'http', url: tools.url('/reserve'), retry: 'safe' }]);
    tools.enqueue(jsonReply(503, { error: 'busy' }), jsonReply(200, { modelOutput: 'reserved after retry' }));
    model.enqueue(toolCallReply('call_r1', 'reserve', ['{"city":"Oslo"}']), textReply(['Reserved.']));

    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Reserve');
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);

    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(tools.requests).toHaveLength(2);
    const keys = tools.keys();
    expect(keys).toHaveLength(1);
    expect(tools.countByKey(keys[0]!)).toBe(2);
    expect(tools.requests[1]!.body).toEqual(tools.requests[0]!.body);
    expect(events.filter((e) => e.type === 'tool.result')).toEqual([expect.objectContaining({ callId: 'call_r1', isError: false })]);
    expect(toolMessages(model, 1)).toEqual([{ tool_call_id: 'call_r1', content: 'reserved after retry' }]);
  });

  it('[CALL-03] an unsafe http tool whose connection drops waits in outcome_unknown; a decision with a result continues the Turn with it and the tool is not called again', async () => {
    const chat = await chatWith([{ name: 'pay', description: 'Pays', parameters: PARAMS, kind: 'http', url: tools.url('/pay'), retry: 'unsafe' }]);
    tools.enqueue(dropReply());
    tools.fallback = jsonReply(200, { modelOutput: 'paid twice' });
    model.enqueue(toolCallReply('call_p1', 'pay', ['{"city":"Rome"}']), textReply(['Paid.']));

    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Pay');
    await waitForExecutionState(t, chat.secret, admitted.executionId, 'outcome_unknown');
    expect(tools.requests).toHaveLength(1);

    const decided = await t
      .http()
      .post(`/v1/executions/${admitted.executionId}/decision`)
      .set('authorization', bearer(chat.secret))
      .send({ decision: 'succeeded', result: { modelOutput: 'decided' } });
    expect({ status: decided.status, body: decided.body as unknown }).toEqual({ status: 202, body: { id: admitted.executionId, state: 'queued' } });
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);

    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(types(events)).toContain('execution.outcome_unknown');
    expect(tools.requests).toHaveLength(1);
    expect(toolMessages(model, 1)).toEqual([{ tool_call_id: 'call_p1', content: 'decided' }]);
    expect(events.filter((e) => e.type === 'tool.result')).toEqual([expect.objectContaining({ callId: 'call_p1', isError: false })]);
    expect(await roles(chat)).toEqual([
      ['user', 'Pay'],
      ['tool', 'decided'],
      ['assistant', 'Paid.'],
    ]);
  });

  // The call is announced with its first send only (tool-phase.ts): the phase that runs again
  // after the decision reads the decided result from the call log and announces nothing.
  it('[CALL-03] an http tool call is announced once: the tool phase that runs again after an outcome_unknown decision publishes no second tool.called', async () => {
    const chat = await chatWith([{ name: 'pay', description: 'Pays', parameters: PARAMS, kind: 'http', url: tools.url('/pay') }]);
    tools.enqueue(dropReply());
    model.enqueue(toolCallReply('call_p2', 'pay', ['{"city":"Rome"}']), textReply(['Paid.']));

    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Pay');
    await waitForExecutionState(t, chat.secret, admitted.executionId, 'outcome_unknown');
    await t
      .http()
      .post(`/v1/executions/${admitted.executionId}/decision`)
      .set('authorization', bearer(chat.secret))
      .send({ decision: 'succeeded', result: { modelOutput: 'decided' } })
      .expect(202);
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);

    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(types(events).filter((type) => type.startsWith('tool.') || type === 'execution.outcome_unknown')).toEqual([
      'tool.called',
      'execution.outcome_unknown',
      'tool.result',
    ]);
    expect(events.filter((e) => e.type === 'tool.result')).toEqual([expect.objectContaining({ callId: 'call_p2', isError: false })]);
    expect(tools.requests).toHaveLength(1);
  });

  it("[STC-07] a saved tool call keeps its definition: editing the Bot's tool while the Turn waits on a client tool does not change the running Turn", async () => {
    const original = { name: 'confirm', description: 'Asks the user to confirm', parameters: PARAMS };
    const chat = await chatWith([original]);
    tools.fallback = jsonReply(200, { modelOutput: 'from the edited http tool' });
    model.enqueue(toolCallReply('call_c1', 'confirm', ['{"city":"Bern"}']), textReply(['Confirmed.']));

    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Go');
    await waitForEvent(t, chat.secret, admitted.executionId, 'tool.called');
    await waitForExecutionState(t, chat.secret, admitted.executionId, 'waiting');

    const edited = { name: 'confirm', description: 'Now an http tool', parameters: { type: 'object', properties: {} }, kind: 'http', url: tools.url('/edited') };
    const patched = await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', bearer(chat.secret)).send({ tools: [edited] });
    expect(patched.status).toBe(200);
    expect((patched.body as { tools: unknown[] }).tools).toEqual([expect.objectContaining({ description: 'Now an http tool', kind: 'http' })]);

    await t.http().post(`/v1/chats/${chat.chatId}/tool-outputs`).set('authorization', bearer(chat.secret)).send({ callId: 'call_c1', output: 'yes' }).expect(202);
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);

    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(tools.requests).toHaveLength(0);
    expect(toolMessages(model, 1)).toEqual([{ tool_call_id: 'call_c1', content: 'yes' }]);
    // The Turn's next model step still offers the tool as the Turn saved it.
    expect((model.requests[1]!.body as { tools: unknown[] }).tools).toEqual([
      { type: 'function', function: { name: 'confirm', description: original.description, parameters: original.parameters } },
    ]);
    expect(await roles(chat)).toEqual([
      ['user', 'Go'],
      ['tool', 'yes'],
      ['assistant', 'Confirmed.'],
    ]);
  });

  it('[STC-11] a client tool: the Turn waits in waiting until the caller posts the output, then continues', async () => {
    const chat = await chatWith([{ name: 'pick_file', description: 'The user picks a file', parameters: PARAMS }]);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    model.enqueue(toolCallReply('call_f1', 'pick_file', ['{}']), heldStreamReply([chunks.role(), chunks.text('Got it.'), chunks.finish('stop')], { holdAfter: 0, release: released }));
    const post = (body: Record<string, unknown>) => t.http().post(`/v1/chats/${chat.chatId}/tool-outputs`).set('authorization', bearer(chat.secret)).send(body);

    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Pick a file');
    const before = await waitForEvent(t, chat.secret, admitted.executionId, 'tool.called');
    expect(before.find((e) => e.type === 'tool.called')).toMatchObject({ callId: 'call_f1', name: 'pick_file', arguments: '{}' });
    await waitForExecutionState(t, chat.secret, admitted.executionId, 'waiting');
    // It waits with no lease: no node runs it until a signal (the output) or its deadline wakes it.
    // That no model step ran without the output shows at the end: the second, last request reads it.
    expect(model.requests).toHaveLength(1);
    expect(await t.database.query('SELECT state, lease_until FROM executions WHERE id = $1', [admitted.executionId])).toEqual([{ state: 'waiting', lease_until: null }]);

    const unknown = await post({ callId: 'call_nope', output: 'x' });
    expect({ status: unknown.status, type: (unknown.body as { type?: string }).type }).toEqual({ status: 404, type: 'ToolCallNotFound' });

    const first = await post({ callId: 'call_f1', output: 'report.pdf' });
    expect({ status: first.status, body: first.body as unknown }).toEqual({ status: 202, body: { turnId: admitted.turnId, executionId: admitted.executionId } });
    await model.waitForRequests(2);
    const again = await post({ callId: 'call_f1', output: 'report.pdf' });
    expect({ status: again.status, body: again.body as unknown }).toEqual({ status: 202, body: { turnId: admitted.turnId, executionId: admitted.executionId } });
    const other = await post({ callId: 'call_f1', output: 'other.pdf' });
    expect({ status: other.status, type: (other.body as { type?: string }).type }).toEqual({ status: 409, type: 'ToolCallAnswered' });
    release();

    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(events.filter((e) => e.type === 'tool.result')).toEqual([expect.objectContaining({ callId: 'call_f1', name: 'pick_file', isError: false })]);
    expect(toolMessages(model, 1)).toEqual([{ tool_call_id: 'call_f1', content: 'report.pdf' }]);
    expect(model.requests).toHaveLength(2);
    expect(await roles(chat)).toEqual([
      ['user', 'Pick a file'],
      ['tool', 'report.pdf'],
      ['assistant', 'Got it.'],
    ]);
  });

  it('[FW-01] a background tool runs as its own execution (a child of the Turn, resource tool-call) and the Turn continues with its result', async () => {
    const chat = await chatWith([{ name: 'build_report', description: 'Builds a report', parameters: PARAMS, kind: 'background', url: tools.url('/report') }]);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // Held until the test has seen the Turn wait on its child.
    tools.enqueue(async (res) => {
      await released;
      await jsonReply(200, { modelOutput: 'report: 3 pages' })(res);
    });
    model.enqueue(toolCallReply('call_b1', 'build_report', ['{"city":"Lima"}']), textReply(['Report done.']));

    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Build it');
    await tools.waitForRequests(1);
    const children = await t.database.query<{ id: string; parent_id: string; state: string; resource_type: string; resource_id: string }>(
      `SELECT id, parent_id, state, resource_type, resource_id FROM executions WHERE workflow = 'chat.background-tool' AND parent_id = $1`,
      [admitted.executionId],
    );
    expect(children).toEqual([expect.objectContaining({ parent_id: admitted.executionId, resource_type: 'tool-call', resource_id: 'call_b1', state: 'running' })]);
    const childId = children[0]!.id;
    await waitForExecutionState(t, chat.secret, admitted.executionId, 'waiting');
    release();

    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    const child = await waitForExecutionState(t, chat.secret, childId, 'completed');
    expect(child).toMatchObject({ kind: 'chat.background-tool', resource: { type: 'tool-call', id: 'call_b1' } });
    expect(tools.requests).toHaveLength(1);
    expect(tools.requests[0]!.body).toEqual({ callId: 'call_b1', name: 'build_report', arguments: { city: 'Lima' } });
    expect(tools.requests[0]!.headers['idempotency-key']).toEqual(expect.any(String));
    expect(types(events).filter((type) => type.startsWith('tool.'))).toEqual(['tool.called', 'tool.result']);
    expect(toolMessages(model, 1)).toEqual([{ tool_call_id: 'call_b1', content: 'report: 3 pages' }]);
    expect(await roles(chat)).toEqual([
      ['user', 'Build it'],
      ['tool', 'report: 3 pages'],
      ['assistant', 'Report done.'],
    ]);
  });

  it("[ERR-01] a background tool that fails: its parent Turn reuses the child's error ID (tool.result, the model's tool message, the Chat), the same ID the child's view and end event show, read again; no second error record", async () => {
    const chat = await chatWith([{ name: 'build_report', description: 'Builds a report', parameters: PARAMS, kind: 'background', url: tools.url('/report'), retry: 'unsafe' }]);
    tools.enqueue(jsonReply(500, { error: 'secret internal detail' }));
    model.enqueue(toolCallReply('call_b2', 'build_report', ['{"city":"Lima"}']), textReply(['The report failed.']));

    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Build it');
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(tools.requests).toHaveLength(1);
    const [child] = await t.database.query<{ id: string }>(`SELECT id FROM executions WHERE workflow = 'chat.background-tool' AND parent_id = $1`, [admitted.executionId]);

    // The child's failure, sealed once: its view (read twice) and its end event name one error ID.
    const view = async () => (await t.http().get(`/v1/executions/${child!.id}`).set('authorization', bearer(chat.secret)).expect(200)).body as { state: string; errorId?: string; category?: string };
    const failed = await view();
    expect(failed).toMatchObject({ state: 'failed', category: 'internal', errorId: expect.any(String) });
    const errorId = failed.errorId!;
    expect(await view()).toEqual(failed);
    const childEvents = await eventsUntilEnd(t, chat.secret, child!.id);
    expect(childEvents.at(-1)).toEqual(expect.objectContaining({ type: 'execution.ended', state: 'failed', category: 'internal', errorId }));
    const records = await t.database.query<{ id: string; execution_id: string; sealed: boolean }>(
      'SELECT id, execution_id, cause_id IS NOT NULL AS sealed FROM error_records WHERE execution_id = ANY($1::uuid[])',
      [[child!.id, admitted.executionId]],
    );
    expect(records).toEqual([{ id: errorId, execution_id: child!.id, sealed: true }]);

    // The parent carries the same category and error ID, and nothing of the cause.
    expect(events.filter((e) => e.type === 'tool.result')).toEqual([expect.objectContaining({ callId: 'call_b2', isError: true, category: 'internal', errorId })]);
    const [message] = toolMessages(model, 1);
    expect(message).toEqual({ tool_call_id: 'call_b2', content: expect.stringContaining(errorId) });
    expect(message!.content).toMatch(/^Error:/);
    expect(message!.content).not.toMatch(/secret internal detail|HTTP 500/);
    expect(await roles(chat)).toEqual([
      ['user', 'Build it'],
      ['tool', message!.content],
      ['assistant', 'The report failed.'],
    ]);
  });

  it('[RES-04] stop during a tool call: the Turn ends cancelled and the hanging tool request is aborted', async () => {
    const chat = await chatWith([{ name: 'slow', description: 'Never answers', parameters: PARAMS, kind: 'http', url: tools.url('/slow') }]);
    const hang = watchedHangReply();
    tools.enqueue(hang.reply);
    model.enqueue(toolCallReply('call_s1', 'slow', ['{}']));

    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Wait for it');
    await waitForEvent(t, chat.secret, admitted.executionId, 'tool.called');
    await within(hang.received, 5_000, 'the tool request never arrived');

    const stopped = await t.http().post(`/v1/chats/${chat.chatId}/stop`).set('authorization', bearer(chat.secret));
    expect({ status: stopped.status, body: stopped.body as unknown }).toEqual({ status: 202, body: { executionIds: [admitted.executionId] } });
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId, 10_000);

    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'cancelled' });
    expect(types(events)).not.toContain('tool.result');
    await within(hang.closed, 5_000, 'the hanging tool request was not aborted');
    expect(((await t.http().get(`/v1/executions/${admitted.executionId}`).set('authorization', bearer(chat.secret)).expect(200)).body as { state: string }).state).toBe(
      'cancelled',
    );
    expect(tools.requests).toHaveLength(1);
    expect(model.requests).toHaveLength(1);
    expect(await roles(chat)).toEqual([['user', 'Wait for it']]);
  });

  it('a tool call naming no tool of the Bot gets an error result the model reads, and the Turn completes', async () => {
    const chat = await chatWith([{ name: 'real_tool', description: 'Exists', parameters: PARAMS, kind: 'http', url: tools.url('/real') }]);
    model.enqueue(toolCallReply('call_x1', 'made_up_tool', ['{"a":1}']), textReply(['Sorry, no such tool.']));

    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Use a tool');
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);

    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(events.filter((e) => e.type.startsWith('tool.'))).toEqual([
      expect.objectContaining({ type: 'tool.called', callId: 'call_x1', name: 'made_up_tool' }),
      expect.objectContaining({ type: 'tool.result', callId: 'call_x1', name: 'made_up_tool', isError: true }),
    ]);
    expect(tools.requests).toHaveLength(0);
    const [message] = toolMessages(model, 1);
    expect(message).toEqual({ tool_call_id: 'call_x1', content: expect.stringContaining('made_up_tool') });
    expect(message!.content).toMatch(/^Error:/);
    expect(await roles(chat)).toEqual([
      ['user', 'Use a tool'],
      ['tool', message!.content],
      ['assistant', 'Sorry, no such tool.'],
    ]);
  });
});

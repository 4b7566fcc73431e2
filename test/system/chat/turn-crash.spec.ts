import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { chunks, FakeOpenAiServer, heldStreamReply, textReply, toolCallReply } from '../../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../../fakes/fake-tool-server';
import { eventTypes, replyText, type Admission } from '../../support/chat-fixture';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { addMember, createChat, expectApi, jobsSettled, readEvents, startServerNode, stopAllServerNodes } from './server-node';

jest.setTimeout(60_000);

const LEASE_SECONDS = 2;
/** What attempt 1 streams before the model holds its stream (and A dies). */
const PARTIAL = ['Partial draft ', 'of attempt one '];
/** Attempt 2's whole answer: the reply a new attempt builds from nothing. */
const FULL_TEXT = 'Hello from the second attempt';

let db: TestDatabase | null = null;
let fake: FakeOpenAiServer | null = null;
/** What each test opened beyond the shared database and model server. */
const opened: Array<{ close(): Promise<void> } | { drop(): Promise<void> }> = [];
/** Ends the held first stream (drops its connection) if the test did not. */
let abandonHeld: (reason: Error) => void = () => undefined;

beforeAll(async () => {
  [db, fake] = await Promise.all([createTestDatabase(), FakeOpenAiServer.start()]);
});

afterAll(async () => {
  abandonHeld(new Error('test over'));
  await stopAllServerNodes();
  await fake?.close();
  await db?.drop().catch(() => undefined);
  for (const thing of opened) await ('drop' in thing ? thing.drop() : thing.close()).catch(() => undefined);
});

async function execution(id: string, query: TestDatabase['query'] = (sql, params) => db!.query(sql, params)): Promise<{ state: string; generation: number; owner_node: string | null }> {
  const [row] = await query<{ state: string; generation: number; owner_node: string | null }>('SELECT state, generation, owner_node FROM executions WHERE id = $1', [id]);
  return row!;
}

/**
 * A Turn outlives the node that streams it (CALL-04), with two real server processes
 * (`dist/apps/server/src/main.js serve`, see server-node.ts) on one test database and the
 * scripted model server in this jest process.
 *
 * Scenario: node A accepts the message, so A owns the Turn's execution (a submit runs it on the
 * node that accepted it). The model's first request streams two text deltas and then holds the
 * stream open; once node B's API shows those deltas, A is killed with SIGKILL mid-stream. B's
 * recovery job finds A's lease expired and takes over (generation 2); the model call is safe,
 * so B asks the model again under the same Idempotency-Key as a new attempt, and this time the
 * model answers the whole text. Nothing of attempt 1 may reach the stored reply.
 *
 * Timing: lease 2 s (renewed every 0.67 s by a live owner); the submit arms a recovery job
 * 2×lease = 4 s later; pg-boss polls every 0.5 s. A dies about 1 s after the submit, so B takes
 * over about 4-5 s after it. The whole test takes about 10 s, most of it booting two servers.
 */
describe('a Turn whose owner node dies mid-stream (two real server processes)', () => {
  it('[CALL-04] kill -9 the node that owns a Turn while the model is streaming; the other node finishes the Turn; the Chat has exactly one assistant reply equal to the model\'s full text; the events show a new attempt; the fake saw exactly two requests (same Idempotency-Key)', async () => {
    const model = fake!;
    const held = new Promise<void>((_, reject) => (abandonHeld = reject));
    held.catch(() => undefined);
    model.enqueue(
      // Attempt 1: role, two deltas, then the stream stays open (its rest is never sent).
      heldStreamReply([chunks.role(), ...PARTIAL.map(chunks.text), chunks.text('never sent'), chunks.finish('stop')], { holdAfter: 1 + PARTIAL.length, release: held }),
      // Attempt 2: the whole text.
      textReply(['Hello ', 'from the ', 'second attempt'], [20, 6]),
    );

    const [a, b] = await Promise.all([
      startServerNode({ databaseUrl: db!.url, nodeId: 'node-a', leaseSeconds: LEASE_SECONDS }),
      startServerNode({ databaseUrl: db!.url, nodeId: 'node-b', leaseSeconds: LEASE_SECONDS }),
    ]);
    const chat = await createChat(a, model.baseUrl);
    const token = chat.secret;

    const admitted = await expectApi<Admission>(202, a, 'POST', `/v1/chats/${chat.chatId}/messages`, {
      token,
      body: { content: 'Hi' },
      headers: { 'idempotency-key': randomUUID() },
    });
    expect(admitted.admission).toBe('started');
    const id = admitted.executionId;

    // A is streaming attempt 1: the model has the request, and B's API shows its deltas.
    await model.waitForRequests(1, 15_000);
    // Tokens that arrive together join one event: the partial text, not its event count, is what A stored.
    const partialText = (events: ReadonlyArray<{ type: string; text?: unknown }>) => events.filter((e) => e.type === 'text.delta').map((e) => e.text).join('');
    const streaming = await readEvents(b, token, id, (events) => partialText(events) === PARTIAL.join(''), 15_000);
    expect(streaming.ended).toBe(false);
    expect(eventTypes(streaming.events)).toEqual(['model.started', 'text.delta']);
    expect(streaming.events.every((e) => e.step === 1 && e.attempt === 1)).toBe(true);
    expect(await execution(id)).toMatchObject({ state: 'running', generation: 1, owner_node: 'node-a' });
    expect(model.requests).toHaveLength(1);

    // kill -9 the owner mid-stream; the held stream is dropped afterwards (nobody reads it any more).
    expect(await a.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    abandonHeld(new Error('node A was killed'));

    // B takes over once A's lease has run out and finishes the Turn.
    const { events, ended } = await readEvents(b, token, id, (_, end) => end, 30_000);
    expect(ended).toBe(true);
    const end = events.at(-1)!;
    expect(end).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));

    // Attempt 1 (A, before the crash) and attempt 2 (B) of step 1, each with its own start event.
    const modelEvents = events.filter((e) => /^(model|text)\./.test(e.type));
    expect(eventTypes(modelEvents)).toEqual(['model.started', 'text.delta', 'model.started', 'text.delta', 'model.completed']);
    expect(modelEvents.every((e) => e.step === 1)).toBe(true);
    const started = events.filter((e) => e.type === 'model.started');
    expect(started.map((e) => [e.step, e.attempt])).toEqual([
      [1, 1],
      [1, 2],
    ]);
    const restart = events.indexOf(started[1]!);
    const deltas = (attempt: number) => events.filter((e) => e.type === 'text.delta' && e.attempt === attempt);
    expect(deltas(1).map((e) => e.text).join('')).toBe(PARTIAL.join(''));
    expect(deltas(1).every((e) => events.indexOf(e) < restart)).toBe(true);
    expect(deltas(2).every((e) => events.indexOf(e) > restart)).toBe(true);
    expect(deltas(2).map((e) => e.text).join('')).toBe(FULL_TEXT);
    expect(events.filter((e) => e.type === 'model.completed').map((e) => [e.step, e.attempt])).toEqual([[1, 2]]);
    // The reply per docs/http-api.md: the deltas of the last attempt of each step.
    expect(replyText(events)).toBe(FULL_TEXT);

    // Exactly one assistant message, the whole text of attempt 2, nothing of attempt 1.
    const page = await expectApi<{ data: Array<{ role: string; content: string; turnId: string }>; next: string | null }>(200, b, 'GET', `/v1/chats/${chat.chatId}/messages`, { token });
    expect(page.data.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Hi'],
      ['assistant', FULL_TEXT],
    ]);
    expect(page.data.every((m) => m.turnId === admitted.turnId)).toBe(true);

    // The model was asked twice, under one Idempotency-Key, with the same prompt.
    expect(model.requests).toHaveLength(2);
    const keys = model.keys();
    expect(keys).toHaveLength(1);
    expect(model.countByKey(keys[0]!)).toBe(2);
    expect(model.requests[1]!.body.messages).toEqual(model.requests[0]!.body.messages);

    // One takeover: generation 2, owned by B, which is still running.
    const body = await expectApi<{ state: string; generation: number }>(200, b, 'GET', `/v1/executions/${id}`, { token });
    expect(body).toMatchObject({ state: 'completed', generation: 2 });
    expect(await execution(id)).toMatchObject({ state: 'completed', generation: 2, owner_node: 'node-b' });
    const calls = await db!.query<{ attempt: number; generation: number; status: string; idempotency_key: string }>(
      `SELECT attempt, generation, status, idempotency_key FROM execution_calls WHERE execution_id = $1 ORDER BY attempt`,
      [id],
    );
    expect(calls.map((c) => [c.attempt, c.generation, c.status === 'succeeded'])).toEqual([
      [1, 1, false],
      [2, 2, true],
    ]);
    expect(calls.every((c) => c.idempotency_key === keys[0])).toBe(true);
    // USE-02/USE-04: the dead owner's attempt is recorded unknown (never zero) when B closes it; B's saved attempt is confirmed.
    const usage = await db!.query(
      `SELECT u.status, u.input_tokens, u.output_tokens FROM usage_records u JOIN execution_calls c ON c.id = u.call_id
        WHERE u.execution_id = $1 ORDER BY c.attempt`,
      [id],
    );
    expect(usage).toEqual([
      { status: 'unknown', input_tokens: null, output_tokens: null },
      { status: 'confirmed', input_tokens: 20, output_tokens: 6 },
    ]);
    // USE-03: the dead owner's attempt held its estimate; B's takeover released it, and B's own hold went with the result.
    const holds = await db!.query<{ attempt: number; released: boolean }>(
      'SELECT attempt, released_at IS NOT NULL AS released FROM usage_holds WHERE execution_id = $1 ORDER BY attempt',
      [id],
    );
    expect(holds).toEqual([
      { attempt: 1, released: true },
      { attempt: 2, released: true },
    ]);
    // Nothing asks the model again once every job of the execution has run (B's takeover armed one more), and B lives on.
    await jobsSettled((sql, params) => db!.query(sql, params), id, 2 * LEASE_SECONDS + 1, 15_000);
    expect(model.requests).toHaveLength(2);
    expect(b.exit).toBeNull();
  });
});

/**
 * Member work takes the same two-process path as service work (REL-01, test/system/engine): a
 * member added through the API sends a message with its own API key to node A, whose fault point
 * kills it (SIGKILL) right after it saved the unsafe tool call's result and before the tool
 * phase's checkpoint. Node B takes over once A's lease ran out, opens the identity A sealed (same
 * master key), reuses the saved model step and tool result from the call log, and finishes the
 * Turn for that member: the tool is called once, the model twice (step 1 on A, step 2 on B).
 *
 * Phases of the Turn: 1 = model (asks for the tool), 2 = tool (unsafe http), 3 = model (answer).
 * The tool endpoint answers only once B's API shows `tool.called`, so the event log is known.
 */
describe("a member's Turn whose owner node dies mid-Turn (two real server processes)", () => {
  it("[REL-01][STC-05] kill -9 the node that owns a member's Turn (sent with the member's own API key) after it saved the unsafe tool result, before its checkpoint; the other node takes over (generation 2), reuses the saved model step and tool result, and finishes the Turn for that member", async () => {
    const [database, model, tools] = await Promise.all([createTestDatabase(), FakeOpenAiServer.start(), FakeToolServer.start()]);
    opened.push(database, model, tools);
    const query = <T>(sql: string, params?: unknown[]) => database.query<T>(sql, params);
    const [a, b] = await Promise.all([
      startServerNode({ databaseUrl: database.url, nodeId: 'node-a', leaseSeconds: LEASE_SECONDS, faults: 'call.result.committed=kill@step:2' }),
      startServerNode({ databaseUrl: database.url, nodeId: 'node-b', leaseSeconds: LEASE_SECONDS }),
    ]);
    const chat = await createChat(a, model.baseUrl, [
      { name: 'book', description: 'Books a table', parameters: { type: 'object', properties: { city: { type: 'string' } } }, kind: 'http', url: tools.url('/book'), retry: 'unsafe' },
    ]);
    const member = await addMember(a, chat.secret);
    const token = member.secret;
    model.enqueue(toolCallReply('call_k1', 'book', ['{"city":', '"Oslo"}'], [10, 4]), textReply(['Booked ', 'for you.'], [30, 5]));
    let knowId!: (id: string) => void;
    const idKnown = new Promise<string>((resolve) => (knowId = resolve));
    let toolAnswered = false;
    tools.enqueue(async (res: ServerResponse) => {
      await readEvents(b, token, await idKnown, (events) => events.some((e) => e.type === 'tool.called'), 15_000);
      toolAnswered = true;
      await jsonReply(200, { modelOutput: 'table booked' })(res);
    });

    const admitted = await expectApi<Admission>(202, a, 'POST', `/v1/chats/${chat.chatId}/messages`, { token, body: { content: 'Book Oslo' }, headers: { 'idempotency-key': randomUUID() } });
    expect(admitted.admission).toBe('started');
    const id = admitted.executionId;
    knowId(id);

    // A's fault point kills it once the tool result is saved (the kill is the fault's, not ours).
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(toolAnswered).toBe(true);
    expect(await execution(id, query)).toMatchObject({ state: 'running', generation: 1, owner_node: 'node-a' });
    // Saved before the kill: the model step (checkpointed) and the tool result (call log only).
    const savedCalls = await calls(id, query);
    expect(savedCalls).toEqual([
      { call_key: '1:model', generation: 1, status: 'succeeded' },
      { call_key: '2:tool:call_k1', generation: 1, status: 'succeeded' },
    ]);
    expect((await query<{ step: number }>('SELECT step FROM executions WHERE id = $1', [id]))[0]!.step).toBe(1);

    // B takes over and finishes from the saved steps.
    const { events, ended } = await readEvents(b, token, id, (_, end) => end, 30_000);
    expect(ended).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type !== 'text.delta').map((e) => [e.type, e.step ?? null])).toEqual([
      ['model.started', 1],
      ['model.completed', 1],
      ['tool.called', 1],
      ['tool.result', 1],
      ['model.started', 2],
      ['model.completed', 2],
      ['execution.ended', null],
    ]);
    expect(replyText(events)).toBe('Booked for you.');
    expect(await execution(id, query)).toMatchObject({ state: 'completed', generation: 2, owner_node: 'node-b' });
    expect(await calls(id, query)).toEqual([...savedCalls, { call_key: '3:model', generation: 2, status: 'succeeded' }]);

    // The unsafe tool was called once; the model once per step, the second time with the saved tool result.
    expect(tools.requests).toHaveLength(1);
    expect(model.requests).toHaveLength(2);
    const lastPrompt = (model.requests[1]!.body as { messages: Array<{ role: string; content: string | null }> }).messages;
    expect(lastPrompt.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['table booked']);

    // All of it is the member's work: the Turn, the execution and both usage records.
    expect(await query('SELECT scope_kind, scope_id FROM chat_turns WHERE id = $1', [admitted.turnId])).toEqual([{ scope_kind: 'member', scope_id: member.memberId }]);
    expect(await query('SELECT scope_kind, scope_id FROM executions WHERE id = $1', [id])).toEqual([{ scope_kind: 'member', scope_id: member.memberId }]);
    expect(await query('SELECT scope_kind, scope_id, status FROM usage_records WHERE execution_id = $1 ORDER BY input_tokens', [id])).toEqual([
      { scope_kind: 'member', scope_id: member.memberId, status: 'confirmed' },
      { scope_kind: 'member', scope_id: member.memberId, status: 'confirmed' },
    ]);
    const page = await expectApi<{ data: Array<{ role: string; content: string }> }>(200, b, 'GET', `/v1/chats/${chat.chatId}/messages`, { token });
    expect(page.data.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Book Oslo'],
      ['tool', 'table booked'],
      ['assistant', 'Booked for you.'],
    ]);

    // Nothing more once every job of the execution has run; B lives on.
    await jobsSettled(query, id, 2 * LEASE_SECONDS + 1, 15_000);
    expect(tools.requests).toHaveLength(1);
    expect(model.requests).toHaveLength(2);
    expect(b.exit).toBeNull();
  });
});

async function calls(id: string, query: TestDatabase['query']): Promise<Array<{ call_key: string; generation: number; status: string }>> {
  return query('SELECT call_key, generation, status FROM execution_calls WHERE execution_id = $1 ORDER BY step, attempt', [id]);
}

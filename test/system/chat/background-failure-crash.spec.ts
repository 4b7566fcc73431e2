import { randomUUID } from 'node:crypto';
import { FakeOpenAiServer, textReply, toolCallReply } from '../../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../../fakes/fake-tool-server';
import type { Admission, EventBody } from '../../support/chat-fixture';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { addMember, createChat, expectApi, jobsSettled, readEvents, startServerNode, stopAllServerNodes } from './server-node';

jest.setTimeout(60_000);

const LEASE_SECONDS = 2;

let db: TestDatabase | null = null;
let model: FakeOpenAiServer | null = null;
let tools: FakeToolServer | null = null;

beforeAll(async () => {
  [db, model, tools] = await Promise.all([createTestDatabase(), FakeOpenAiServer.start(), FakeToolServer.start()]);
});

afterAll(async () => {
  await stopAllServerNodes();
  await model?.close();
  await tools?.close();
  await db?.drop().catch(() => undefined);
});

/**
 * A failure reused after a crash keeps its one error ID (ERR-01), with two real server processes
 * on one database (REL-01). A member's Turn asks for a background tool; its child execution calls
 * the tool, which answers 500, so the child fails with a sealed cause and error ID E. The Turn's
 * tool phase reads that failure and publishes it; node A is killed (fault point) just before that
 * phase's checkpoint commits. Node B, started afterwards, takes over the Turn, runs the tool phase
 * again from the saved waiting state, reads the same failed child and goes on. Every surface —
 * the child's view and end event, both runs' `tool.result`, the model's tool message and the Chat —
 * names E, and E is the only error record: nothing minted a second ID for the same failure.
 *
 * Engine steps (checkpoint numbers): 1 = model (asks for the tool), 2 = tool (starts the child and
 * saves its wait), 3 = tool again once the child ended (reads its failure; A dies before this
 * checkpoint), 4 = model (answer). A runs alone until it dies, so the child and the Turn's
 * wake-up both run on A.
 */
describe('a failed background tool carried into its Turn across a takeover (two real server processes)', () => {
  it("[ERR-01][REL-01] the Turn's tool phase that read a failed background tool runs again on another node after kill -9: it carries the child's same error ID; no second error record", async () => {
    const a = await startServerNode({ databaseUrl: db!.url, nodeId: 'node-a', leaseSeconds: LEASE_SECONDS, faults: 'checkpoint.before-commit=kill@step:3' });
    const chat = await createChat(a, model!.baseUrl, [
      { name: 'build_report', description: 'Builds a report', parameters: { type: 'object' }, kind: 'background', url: tools!.url('/report'), retry: 'unsafe' },
    ]);
    const member = await addMember(a, chat.secret);
    tools!.enqueue(jsonReply(500, { error: 'disk full on report-7' }));
    model!.enqueue(toolCallReply('call_r9', 'build_report', ['{}'], [10, 3]), textReply(['The report could not be built.'], [20, 6]));

    const admitted = await expectApi<Admission>(202, a, 'POST', `/v1/chats/${chat.chatId}/messages`, {
      token: member.secret,
      body: { content: 'Build the report' },
      headers: { 'idempotency-key': randomUUID() },
    });
    const id = admitted.executionId;
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });

    // What A left: a failed child with its one error record, the Turn at its saved wait (step 2),
    // running under generation 2 (A's claim when the child's end woke it).
    const [child] = await db!.query<{ id: string; state: string; error_id: string; category: string }>(
      `SELECT id, state, error_id, category FROM executions WHERE parent_id = $1 AND workflow = 'chat.background-tool'`,
      [id],
    );
    expect(child).toMatchObject({ state: 'failed', category: 'internal', error_id: expect.any(String) });
    const errorId = child!.error_id;
    expect(await db!.query('SELECT state, generation, step, owner_node FROM executions WHERE id = $1', [id])).toEqual([{ state: 'running', generation: 2, step: 2, owner_node: 'node-a' }]);

    const b = await startServerNode({ databaseUrl: db!.url, nodeId: 'node-b', leaseSeconds: LEASE_SECONDS });
    const { events, ended } = await readEvents(b, member.secret, id, (_, end) => end, 30_000);
    expect(ended).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(await db!.query('SELECT state, generation, owner_node FROM executions WHERE id = $1', [id])).toEqual([{ state: 'completed', generation: 3, owner_node: 'node-b' }]);

    // The child: its view (read twice, through B) and its end event name E.
    const view = () => expectApi<{ state: string; errorId?: string; category?: string }>(200, b, 'GET', `/v1/executions/${child!.id}`, { token: member.secret });
    const childView = await view();
    expect(childView).toMatchObject({ state: 'failed', category: 'internal', errorId });
    expect(await view()).toEqual(childView);
    const childEnd = (await readEvents(b, member.secret, child!.id, (_, end) => end, 10_000)).events.at(-1)!;
    expect(childEnd).toMatchObject({ type: 'execution.ended', state: 'failed', category: 'internal', errorId });

    // The parent: A's run and B's run of the tool phase both published E, and the model read E once.
    const results = events.filter((e: EventBody) => e.type === 'tool.result');
    expect(results.map((e) => [e.callId, e.isError, e.category, e.errorId])).toEqual([
      ['call_r9', true, 'internal', errorId],
      ['call_r9', true, 'internal', errorId],
    ]);
    expect(model!.requests).toHaveLength(2);
    const toolMessages = (model!.requests[1]!.body as { messages: Array<{ role: string; content: string | null }> }).messages.filter((m) => m.role === 'tool');
    expect(toolMessages).toEqual([expect.objectContaining({ content: expect.stringContaining(errorId) })]);
    expect(toolMessages[0]!.content).not.toMatch(/disk full|report-7|HTTP 500/);
    const page = await expectApi<{ data: Array<{ role: string; content: string }> }>(200, b, 'GET', `/v1/chats/${chat.chatId}/messages`, { token: member.secret });
    expect(page.data.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Build the report'],
      ['tool', toolMessages[0]!.content],
      ['assistant', 'The report could not be built.'],
    ]);

    // One failure, one sealed record: the child's. The tool was called once (unsafe, failed for good).
    expect(await db!.query('SELECT id, execution_id FROM error_records')).toEqual([{ id: errorId, execution_id: child!.id }]);
    expect(tools!.requests).toHaveLength(1);
    await jobsSettled((sql, params) => db!.query(sql, params), id, 2 * LEASE_SECONDS + 1, 15_000);
    expect(tools!.requests).toHaveLength(1);
    expect(b.exit).toBeNull();
  });
});

import { randomUUID } from 'node:crypto';
import { chunks, FakeOpenAiServer, streamReply, textReply } from '../../fakes/fake-openai-server';
import { FakeToolServer, hangReply, jsonReply } from '../../fakes/fake-tool-server';
import type { Admission } from '../../support/chat-fixture';
import { createTestDatabase } from '../../support/test-database';
import { createChat, expectApi, jobsSettled, readEvents, startServerNode, stopAllServerNodes } from './server-node';

jest.setTimeout(90_000);

const LEASE_SECONDS = 2;

const opened: Array<{ close(): Promise<void> } | { drop(): Promise<void> }> = [];

afterAll(async () => {
  await stopAllServerNodes();
  for (const thing of opened) await ('drop' in thing ? thing.drop() : thing.close()).catch(() => undefined);
});

/**
 * A decision that arrives during a takeover (two real server processes on one database, decision
 * 025). One model step asks for `pay` (needs approval) and `lookup` (safe). Node A accepts the
 * message, runs the Turn and sends `lookup`, which the fake never answers, so the step's tool
 * phase is still running on A while `pay` waits. A is frozen (SIGSTOP); while its lease still
 * holds the Turn, the decision is posted to node B; then A is killed (SIGKILL). It is saved on the approval row and its
 * wake-up signal commits with it, so nothing depends on the dead owner: B takes the Turn over,
 * runs the tool phase again (the safe `lookup` is sent again under its key), reads the saved
 * decision and sends the approved `pay` exactly once, with its saved arguments.
 */
describe('a decision that arrives during a takeover (two real server processes)', () => {
  it('[FW-02] [STC-07] [REL-02] approve while the owner of the running tool phase is frozen, then dead, before anyone took it over: the decision is kept, the other node takes over, and the approved call runs exactly once', async () => {
    const [database, model, tools] = await Promise.all([createTestDatabase(), FakeOpenAiServer.start(), FakeToolServer.start()]);
    opened.push(database, model, tools);
    const query = <T>(sql: string, params?: unknown[]) => database.query<T>(sql, params);
    const [a, b] = await Promise.all([
      // A's lease is long enough that nobody takes its Turn over while it is frozen.
      startServerNode({ databaseUrl: database.url, nodeId: 'node-a', leaseSeconds: 10 }),
      startServerNode({ databaseUrl: database.url, nodeId: 'node-b', leaseSeconds: LEASE_SECONDS }),
    ]);
    const chat = await createChat(b, model.baseUrl, [
      { name: 'pay', description: 'Pays', parameters: { type: 'object' }, kind: 'http', url: tools.url('/pay'), retry: 'unsafe', approval: 'always' },
      { name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url: tools.url('/lookup'), retry: 'safe' },
    ]);
    const token = chat.secret;
    model.enqueue(
      streamReply([
        chunks.role(),
        chunks.toolCallStart(0, 'call_pay', 'pay'),
        chunks.toolCallArgs(0, '{"amount":40}'),
        chunks.toolCallStart(1, 'call_look', 'lookup'),
        chunks.toolCallArgs(1, '{"who":"ana"}'),
        chunks.finish('tool_calls'),
        chunks.usage(10, 5),
      ]),
      textReply(['Paid and looked up.'], [30, 5]),
    );
    // A's lookup is never answered: A dies with the tool phase running.
    tools.enqueue(hangReply());
    const paid: unknown[] = [];
    tools.fallback = (res) => {
      const request = tools.requests.at(-1)!;
      if (request.path === '/pay') paid.push(request.body);
      if (paid.length > 1) return jsonReply(500, { error: 'the unsafe tool was called twice' })(res);
      return jsonReply(200, { modelOutput: request.path === '/pay' ? 'paid 40' : 'ana is here' })(res);
    };

    const admitted = await expectApi<Admission>(202, a, 'POST', `/v1/chats/${chat.chatId}/messages`, { token, body: { content: 'Pay 40 and look Ana up' }, headers: { 'idempotency-key': randomUUID() } });
    const id = admitted.executionId;
    await readEvents(b, token, id, (events) => events.some((e) => e.type === 'approval.requested'), 15_000);
    await tools.waitForRequests(1);
    expect(tools.requests[0]!.path).toBe('/lookup');
    const [before] = await query<{ state: string; owner_node: string | null; generation: number }>('SELECT state, owner_node, generation FROM executions WHERE id = $1', [id]);
    expect(before).toMatchObject({ state: 'running', owner_node: 'node-a' });
    const pending = await expectApi<{ data: Array<{ id: string; state: string }> }>(200, b, 'GET', `/v1/approvals?executionId=${id}`, { token });
    expect(pending.data.map((p) => p.state)).toEqual(['pending']);

    // A stops answering (frozen: its connections look alive, so only its lease could end its
    // hold); the decision arrives while the unresponsive owner still holds the running Turn.
    a.child.kill('SIGSTOP');
    const decided = await expectApi<{ state: string }>(200, b, 'POST', `/v1/approvals/${pending.data[0]!.id}/decision`, { token, body: { decision: 'approve', reason: 'during the takeover' } });
    expect(decided.state).toBe('approved');
    const [during] = await query<{ owner_node: string | null; generation: number; leased: boolean }>('SELECT owner_node, generation, lease_until > now() AS leased FROM executions WHERE id = $1', [id]);
    expect(during).toEqual({ owner_node: 'node-a', generation: before!.generation, leased: true });
    // Then it dies; B notices the dead node and takes the Turn over.
    expect(await a.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });

    const { events, ended } = await readEvents(b, token, id, (_, end) => end, 40_000);
    expect(ended).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    const [after] = await query<{ generation: number }>('SELECT generation FROM executions WHERE id = $1', [id]);
    expect(after!.generation).toBeGreaterThan(before!.generation);
    // The saved decision reached the new owner once; the approved call ran once, with the saved arguments.
    expect(events.filter((e) => e.type === 'approval.decided')).toEqual([expect.objectContaining({ approvalId: pending.data[0]!.id, decision: 'approve' })]);
    expect(events.filter((e) => e.type === 'tool.called' && e.callId === 'call_pay')).toHaveLength(1);
    expect(paid).toEqual([{ callId: 'call_pay', name: 'pay', arguments: { amount: 40 } }]);
    // The model read both results, each on its own call.
    const prompt = (model.requests[1]!.body as { messages: Array<{ role: string; tool_call_id?: string; content: string | null }> }).messages;
    expect(prompt.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content])).toEqual([
      ['call_pay', 'paid 40'],
      ['call_look', 'ana is here'],
    ]);

    await jobsSettled(query, id, 2 * LEASE_SECONDS + 1, 15_000);
    expect(paid).toHaveLength(1);
    const approval = await expectApi<{ state: string; reason: string }>(200, b, 'GET', `/v1/approvals/${pending.data[0]!.id}`, { token });
    expect(approval).toMatchObject({ state: 'approved', reason: 'during the takeover' });
    expect(b.exit).toBeNull();
  });
});

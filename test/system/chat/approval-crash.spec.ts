import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { FakeOpenAiServer, textReply, toolCallReply } from '../../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../../fakes/fake-tool-server';
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
 * An approved unsafe tool call whose owner node dies (two real server processes on one
 * database, decision 025). Phases of the Turn: 1 = model (asks for `pay`; the approval is saved
 * with that checkpoint), 2 = tool (the call is gated: the Turn waits), 3 = tool again (woken by
 * the decision, the approved call is sent), 4 = model (the answer).
 *
 * The decision is posted to node A, so A claims the woken Turn and sends the approved call; A's
 * fault point kills it (SIGKILL) right after the tool's result is saved in the call log and
 * before the phase's checkpoint. Node B takes over once A's lease ran out, runs phase 3 again and
 * reuses the saved result: the unsafe tool's fake fails the test if it is called a second time.
 */
describe('an approved tool call whose owner node dies (two real server processes)', () => {
  it('[FW-02][STC-07] approve, then kill -9 the owner after the approved unsafe call was sent and its result saved: the other node finishes the Turn, and the tool ran exactly once with the saved arguments', async () => {
    const [database, model, tools] = await Promise.all([createTestDatabase(), FakeOpenAiServer.start(), FakeToolServer.start()]);
    opened.push(database, model, tools);
    const query = <T>(sql: string, params?: unknown[]) => database.query<T>(sql, params);
    const [a, b] = await Promise.all([
      startServerNode({ databaseUrl: database.url, nodeId: 'node-a', leaseSeconds: LEASE_SECONDS, faults: 'call.result.committed=kill@step:3' }),
      startServerNode({ databaseUrl: database.url, nodeId: 'node-b', leaseSeconds: LEASE_SECONDS }),
    ]);
    const chat = await createChat(b, model.baseUrl, [
      { name: 'pay', description: 'Pays', parameters: { type: 'object' }, kind: 'http', url: tools.url('/pay'), retry: 'unsafe', approval: 'always' },
    ]);
    const token = chat.secret;
    model.enqueue(toolCallReply('call_pay', 'pay', ['{"amount":', '40}'], [10, 4]), textReply(['Paid.'], [30, 5]));
    let idKnown!: (id: string) => void;
    const executionId = new Promise<string>((resolve) => (idKnown = resolve));
    tools.enqueue(async (res: ServerResponse) => {
      // Answered once tool.called is in the log (so the log is known), then A dies after saving the result.
      await readEvents(b, token, await executionId, (events) => events.some((e) => e.type === 'tool.called'), 15_000);
      await jsonReply(200, { modelOutput: 'paid 40' })(res);
    });
    let secondCall = false;
    tools.fallback = (res) => {
      secondCall = true;
      return jsonReply(500, { error: 'the unsafe tool was called twice' })(res);
    };

    const admitted = await expectApi<Admission>(202, b, 'POST', `/v1/chats/${chat.chatId}/messages`, { token, body: { content: 'Pay 40' }, headers: { 'idempotency-key': randomUUID() } });
    const id = admitted.executionId;
    idKnown(id);
    await readEvents(b, token, id, (events) => events.some((e) => e.type === 'approval.requested'), 15_000);
    const pending = await expectApi<{ data: Array<{ id: string; state: string }> }>(200, b, 'GET', `/v1/approvals?executionId=${id}`, { token });
    expect(pending.data.map((p) => p.state)).toEqual(['pending']);
    // Waiting for the decision: nobody holds the Turn, so the node that takes the decision runs it.
    for (;;) {
      const [row] = await query<{ state: string }>('SELECT state FROM executions WHERE id = $1', [id]);
      if (row!.state === 'waiting') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await expectApi(200, a, 'POST', `/v1/approvals/${pending.data[0]!.id}/decision`, { token, body: { decision: 'approve' } });

    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const saved = await query<{ call_key: string; generation: number; status: string }>(
      `SELECT call_key, generation, status FROM execution_calls WHERE execution_id = $1 AND kind = 'tool'`,
      [id],
    );
    expect(saved).toEqual([{ call_key: '3:tool:call_pay', generation: expect.any(Number), status: 'succeeded' }]);

    const { events, ended } = await readEvents(b, token, id, (_, end) => end, 30_000);
    expect(ended).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(events.filter((e) => e.type === 'tool.called')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'tool.result' && e.callId === 'call_pay').length).toBeGreaterThanOrEqual(1);
    expect(tools.requests).toHaveLength(1);
    expect(tools.requests[0]!.body).toEqual({ callId: 'call_pay', name: 'pay', arguments: { amount: 40 } });
    expect(secondCall).toBe(false);
    const prompt = (model.requests[1]!.body as { messages: Array<{ role: string; content: string | null }> }).messages;
    expect(prompt.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['paid 40']);
    const approval = await expectApi<{ state: string }>(200, b, 'GET', `/v1/approvals/${pending.data[0]!.id}`, { token });
    expect(approval.state).toBe('approved');

    await jobsSettled(query, id, 2 * LEASE_SECONDS + 1, 15_000);
    expect(tools.requests).toHaveLength(1);
    expect(b.exit).toBeNull();
  });
});

import { randomUUID } from 'node:crypto';
import { chunks, FakeOpenAiServer, heldStreamReply, textReply, toolCallReply } from '../../fakes/fake-openai-server';
import type { Admission } from '../../support/chat-fixture';
import { createTestDatabase } from '../../support/test-database';
import { ADMIN_TOKEN, expectApi, jobsSettled, readEvents, startServerNode, stopAllServerNodes } from './server-node';

jest.setTimeout(90_000);

const LEASE_SECONDS = 2;
const opened: Array<{ close(): Promise<void> } | { drop(): Promise<void> }> = [];
let abandonHeld: (reason: Error) => void = () => undefined;

afterAll(async () => {
  abandonHeld(new Error('test over'));
  await stopAllServerNodes();
  for (const thing of opened) await ('drop' in thing ? thing.drop() : thing.close()).catch(() => undefined);
});

/**
 * A task whose node dies mid-task (two real server processes on one database, decision 025). Node
 * A accepts the message, so it runs the lead's Turn and the task its delegate call starts. The
 * task's model stream is held open; once node B's API shows its first delta, A is killed with
 * SIGKILL. B takes the task over (a new attempt of its model step), the task completes, and its
 * end and notice reach the waiting lead once: one task.ended, one tool result, the task's reply.
 */
describe('a task whose owner node dies (two real server processes)', () => {
  it('[EXE-14][FW-02] kill -9 mid-task: the task resumes on the other node, and its notice reaches the parent exactly once', async () => {
    const [database, model] = await Promise.all([createTestDatabase(), FakeOpenAiServer.start()]);
    opened.push(database, model);
    const query = <T>(sql: string, params?: unknown[]) => database.query<T>(sql, params);
    const [a, b] = await Promise.all([
      startServerNode({ databaseUrl: database.url, nodeId: 'node-a', leaseSeconds: LEASE_SECONDS }),
      startServerNode({ databaseUrl: database.url, nodeId: 'node-b', leaseSeconds: LEASE_SECONDS }),
    ]);
    const org = await expectApi<{ apiKey: { secret: string } }>(201, b, 'POST', '/v1/organizations', { token: ADMIN_TOKEN, body: { name: 'Tasks' } });
    const token = org.apiKey.secret;
    await expectApi(201, b, 'POST', '/v1/model-providers', { token, body: { name: 'fake', kind: 'openai-compatible', baseUrl: model.baseUrl } });
    const helper = await expectApi<{ id: string }>(201, b, 'POST', '/v1/bots', { token, body: { name: 'Helper', model: 'fake/m' } });
    const lead = await expectApi<{ id: string }>(201, b, 'POST', '/v1/bots', { token, body: { name: 'Lead', model: 'fake/m', tools: [{ name: 'ask_helper', kind: 'delegate', botId: helper.id }] } });
    const chat = await expectApi<{ id: string }>(201, b, 'POST', '/v1/chats', { token, body: { botId: lead.id } });

    const held = new Promise<void>((_, reject) => (abandonHeld = reject));
    held.catch(() => undefined);
    model.enqueue(
      toolCallReply('call_t', 'ask_helper', ['{"input":"do the task"}'], [5, 2]),
      heldStreamReply([chunks.role(), chunks.text('half '), chunks.text('never'), chunks.finish('stop')], { holdAfter: 2, release: held }),
      textReply(['The task is done.'], [5, 4]),
      textReply(['Helper finished.'], [5, 3]),
    );
    const admitted = await expectApi<Admission>(202, a, 'POST', `/v1/chats/${chat.id}/messages`, { token, body: { content: 'Delegate it' }, headers: { 'idempotency-key': randomUUID() } });
    const lead1 = await readEvents(b, token, admitted.executionId, (events) => events.some((e) => e.type === 'task.started'), 15_000);
    const taskId = String(lead1.events.find((e) => e.type === 'task.started')?.executionId);
    await readEvents(b, token, taskId, (events) => events.some((e) => e.type === 'text.delta'), 15_000);
    expect(await a.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    abandonHeld(new Error('node A was killed'));

    const task = await readEvents(b, token, taskId, (_, end) => end, 30_000);
    expect(task.events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    const { events, ended } = await readEvents(b, token, admitted.executionId, (_, end) => end, 30_000);
    expect(ended).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(events.filter((e) => e.type === 'task.started')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'task.ended')).toEqual([expect.objectContaining({ callId: 'call_t', executionId: taskId, state: 'completed' })]);
    expect(events.filter((e) => e.type === 'tool.result')).toEqual([expect.objectContaining({ callId: 'call_t', isError: false })]);
    const lastPrompt = (model.requests.at(-1)!.body as { messages: Array<{ role: string; content: string | null }> }).messages;
    expect(lastPrompt.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['The task is done.']);
    expect(model.requests).toHaveLength(4);
    // The task was taken over (a second generation) and notified its parent once.
    const [row] = await query<{ generation: number; owner_node: string }>('SELECT generation, owner_node FROM executions WHERE id = $1', [taskId]);
    expect(row).toMatchObject({ owner_node: 'node-b' });
    expect(row!.generation).toBeGreaterThanOrEqual(2);
    await jobsSettled(query, admitted.executionId, 2 * LEASE_SECONDS + 1, 15_000);
    expect(model.requests).toHaveLength(4);
    expect(b.exit).toBeNull();
  });
});

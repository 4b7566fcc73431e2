import { randomUUID } from 'node:crypto';
import { FakeOpenAiServer, textReply, toolCallReply } from '../../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../../fakes/fake-tool-server';
import type { Admission } from '../../support/chat-fixture';
import { createTestDatabase } from '../../support/test-database';
import { createChat, expectApi, readEvents, startServerNode, stopAllServerNodes, waitUntil } from './server-node';

jest.setTimeout(90_000);

const LEASE_SECONDS = 2;
const opened: Array<{ close(): Promise<void> } | { drop(): Promise<void> }> = [];
let releaseHung: () => void = () => undefined;

afterAll(async () => {
  releaseHung();
  await stopAllServerNodes();
  for (const thing of opened) await ('drop' in thing ? thing.drop() : thing.close()).catch(() => undefined);
});

/**
 * Pause and resume across a takeover (two real server processes on one database). Node A runs a
 * Turn whose tool call hangs for a few seconds of counted time; A is killed with SIGKILL and the
 * Turn is paused through node B while its dead owner still holds it. B takes it over once A's
 * lease ran out and parks it, paused. After a pause longer than the Turn's whole time limit it is
 * resumed: it finishes (the pause did not count) and its spent time still holds the seconds
 * counted before the takeover (recovery did not reset them).
 */
describe('pause and resume across a takeover (two real server processes)', () => {
  it('[TASK-01] [TASK-03] pause, kill -9 the owner, take over, resume: the time counted before the takeover is kept and the paused time is not counted', async () => {
    const [database, model, tools] = await Promise.all([createTestDatabase(), FakeOpenAiServer.start(), FakeToolServer.start()]);
    opened.push(database, model, tools);
    const query = <T>(sql: string, params?: unknown[]) => database.query<T>(sql, params);
    const [a, b] = await Promise.all([
      startServerNode({ databaseUrl: database.url, nodeId: 'node-a', leaseSeconds: LEASE_SECONDS }),
      startServerNode({ databaseUrl: database.url, nodeId: 'node-b', leaseSeconds: LEASE_SECONDS }),
    ]);
    const chat = await createChat(b, model.baseUrl, [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url: tools.url('/lookup'), retry: 'safe' }]);
    const token = chat.secret;
    await expectApi(200, b, 'PATCH', `/v1/bots/${chat.botId}`, { token, body: { limits: { maxSeconds: 10 } } });
    model.enqueue(toolCallReply('c1', 'lookup', ['{}'], [5, 1]), textReply(['Found it.'], [5, 2]));
    // The first send hangs until node A dies; the send after the takeover is answered.
    const hung = new Promise<void>((resolve) => (releaseHung = resolve));
    tools.enqueue(async () => hung);
    tools.fallback = jsonReply(200, { modelOutput: 'found' });

    const admitted = await expectApi<Admission>(202, a, 'POST', `/v1/chats/${chat.chatId}/messages`, { token, body: { content: 'Look it up' }, headers: { 'idempotency-key': randomUUID() } });
    const id = admitted.executionId;
    await readEvents(b, token, id, (events) => events.some((e) => e.type === 'tool.called'), 15_000);
    // Three seconds of the Turn's own work (its tool call) count toward its limit.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await a.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await expectApi<{ paused: boolean }>(202, b, 'POST', `/v1/executions/${id}/pause`, { token })).toMatchObject({ id, paused: true });
    // B takes the Turn over from the dead owner and parks it, paused.
    await waitUntil(
      async () => {
        const [row] = await query<{ state: string; paused: boolean; generation: number }>('SELECT state, paused, generation FROM executions WHERE id = $1', [id]);
        return row!.state === 'waiting' && row!.paused && row!.generation >= 2 ? row : undefined;
      },
      20_000,
      () => 'the takeover that parks the paused Turn',
    );
    // Paused longer than the whole limit: none of it counts.
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    expect(await expectApi<{ paused: boolean }>(202, b, 'POST', `/v1/executions/${id}/resume`, { token })).toMatchObject({ id, paused: false });

    const { events, ended } = await readEvents(b, token, id, (_, end) => end, 30_000);
    expect(ended).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed', stop: null });
    const view = await expectApi<{ limits: { maxSeconds: number }; spent: { seconds: number } }>(200, b, 'GET', `/v1/executions/${id}`, { token });
    expect(view.limits.maxSeconds).toBe(10);
    // The seconds before the takeover are kept (not reset to zero), and the 12 paused ones are not among them.
    expect(view.spent.seconds).toBeGreaterThanOrEqual(3);
    expect(view.spent.seconds).toBeLessThan(10);
  });
});

import { randomUUID } from 'node:crypto';
import { chunks, FakeOpenAiServer, heldStreamReply, textReply } from '../../fakes/fake-openai-server';
import type { Admission } from '../../support/chat-fixture';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { ADMIN_TOKEN, createChat, expectApi, readEvents, startServerNode, stopAllServerNodes } from './server-node';

jest.setTimeout(60_000);

let db: TestDatabase | null = null;
let fake: FakeOpenAiServer | null = null;
let abandonHeld: (reason: Error) => void = () => undefined;

beforeAll(async () => {
  [db, fake] = await Promise.all([createTestDatabase(), FakeOpenAiServer.start()]);
});

afterAll(async () => {
  abandonHeld(new Error('test over'));
  await stopAllServerNodes();
  await fake?.close();
  await db?.drop().catch(() => undefined);
});

/**
 * Charged once across a crash (USE-01, USE-03), with two real server processes on one database:
 * node A's model call has its answer streaming (usage included) when A is killed with SIGKILL,
 * before its result and checkpoint are saved. Node B takes over, asks again as attempt 2 and
 * completes. Exactly one charge is posted (attempt 2's), A's hold is released, and A's attempt
 * is an unknown usage record keeping its reservation, never a second charge.
 */
describe('billing across a kill -9 of the Turn’s owner (two real server processes)', () => {
  it('[USE-03] kill -9 the owner between the provider’s answer and the checkpoint: after the takeover exactly one charge is posted and the old hold is released', async () => {
    const model = fake!;
    const held = new Promise<void>((_, reject) => (abandonHeld = reject));
    held.catch(() => undefined);
    model.enqueue(
      // Attempt 1: the whole answer with its usage, then the stream stays open: the result is never saved.
      heldStreamReply([chunks.role(), chunks.text('first answer'), chunks.finish('stop'), chunks.usage(10, 5)], { holdAfter: 4, release: held }),
      textReply(['second answer'], [10, 6]),
    );
    const [a, b] = await Promise.all([
      startServerNode({ databaseUrl: db!.url, nodeId: 'node-a', leaseSeconds: 2 }),
      startServerNode({ databaseUrl: db!.url, nodeId: 'node-b', leaseSeconds: 2 }),
    ]);
    const chat = await createChat(a, model.baseUrl);
    const token = chat.secret;
    await expectApi(201, a, 'POST', `/v1/platform/organizations/${chat.organizationId}/credits`, { token: ADMIN_TOKEN, body: { amountMicros: 1_000_000, reason: 'crash test' } });
    await expectApi(200, a, 'PUT', `/v1/platform/organizations/${chat.organizationId}/prices/${encodeURIComponent('fake/gpt-test')}`, {
      token: ADMIN_TOKEN,
      body: { inputPerMillionMicros: 1_000_000, outputPerMillionMicros: 1_000_000 },
    });

    const admitted = await expectApi<Admission>(202, a, 'POST', `/v1/chats/${chat.chatId}/messages`, { token, body: { content: 'Hi' }, headers: { 'idempotency-key': randomUUID() } });
    await model.waitForRequests(1, 15_000);
    await readEvents(b, token, admitted.executionId, (events) => events.some((e) => e.type === 'text.delta'), 15_000);
    expect(await a.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    abandonHeld(new Error('node A was killed'));

    const { events, ended } = await readEvents(b, token, admitted.executionId, (_, end) => end, 30_000);
    expect(ended).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(model.requests).toHaveLength(2);

    const records = await db!.query<{ id: string; status: string; cost_micros: string | null; reserved_micros: string | null }>(
      `SELECT u.id, u.status, u.cost_micros::text, u.reserved_micros::text FROM usage_records u JOIN execution_calls c ON c.id = u.call_id
        WHERE u.execution_id = $1 ORDER BY c.attempt`,
      [admitted.executionId],
    );
    expect(records).toEqual([
      { id: expect.any(String), status: 'unknown', cost_micros: null, reserved_micros: expect.stringMatching(/^[1-9]\d*$/) },
      { id: expect.any(String), status: 'confirmed', cost_micros: '16', reserved_micros: expect.any(String) },
    ]);
    const charges = await db!.query<{ usage_record_id: string; amount_micros: string }>(
      `SELECT usage_record_id, amount_micros::text FROM credit_entries WHERE organization_id = $1 AND kind = 'charge'`,
      [chat.organizationId],
    );
    expect(charges).toEqual([{ usage_record_id: records[1]!.id, amount_micros: '-16' }]);
    const holds = await db!.query<{ attempt: number; released: boolean }>(
      'SELECT attempt, released_at IS NOT NULL AS released FROM usage_holds WHERE execution_id = $1 ORDER BY attempt',
      [admitted.executionId],
    );
    expect(holds).toEqual([
      { attempt: 1, released: true },
      { attempt: 2, released: true },
    ]);
  });
});

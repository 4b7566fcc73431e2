import { randomUUID } from 'node:crypto';
import { chunks, FakeOpenAiServer, heldStreamReply, textReply } from '../../fakes/fake-openai-server';
import type { Admission } from '../../support/chat-fixture';
import { createTestDatabase } from '../../support/test-database';
import { addMember, createChat, expectApi, readEvents, startServerNode, stopAllServerNodes, type ServerNode } from './server-node';

jest.setTimeout(90_000);

const opened: Array<{ close(): Promise<void> } | { drop(): Promise<void> }> = [];

afterAll(async () => {
  await stopAllServerNodes();
  for (const thing of opened) await ('drop' in thing ? thing.drop() : thing.close()).catch(() => undefined);
});

/**
 * Two real server processes on one database share no memory, no bus and no RPC: what one node
 * asks of work the other runs can only travel through the execution. A stop posted to the node
 * that does not run the Turn reaches the running owner as the execution's stored cancel signal,
 * the owner ends the Turn itself (no takeover, same generation), and the member's next message
 * runs on whichever node takes it, since no node keeps a runtime of its own per member.
 */
describe('[REL-02] coordination between nodes goes through executions', () => {
  it('[REL-02] a stop posted to the other node cancels the running Turn through its stored cancel signal; the owner ends it itself, and the member’s next message runs on either node', async () => {
    const [database, model] = await Promise.all([createTestDatabase(), FakeOpenAiServer.start()]);
    opened.push(database, model);
    const query = <T>(sql: string, params?: unknown[]) => database.query<T>(sql, params);
    const nodes = await Promise.all([
      startServerNode({ databaseUrl: database.url, nodeId: 'node-a', leaseSeconds: 10 }),
      startServerNode({ databaseUrl: database.url, nodeId: 'node-b', leaseSeconds: 10 }),
    ]);
    const chat = await createChat(nodes[0], model.baseUrl);
    const member = await addMember(nodes[0], chat.secret);
    const own = await expectApi<{ id: string }>(201, nodes[1], 'POST', '/v1/chats', { token: member.secret, body: { botId: chat.botId } });
    // The model streams a first word, then holds the stream open: the Turn runs until it is stopped.
    model.enqueue(heldStreamReply([chunks.role(), chunks.text('Thinking')], { holdAfter: 2, release: new Promise<void>(() => undefined) }));

    const admitted = await expectApi<Admission>(202, nodes[0], 'POST', `/v1/chats/${own.id}/messages`, { token: member.secret, body: { content: 'Think long' }, headers: { 'idempotency-key': randomUUID() } });
    const id = admitted.executionId;
    await model.waitForRequests(1);
    const [running] = await query<{ state: string; owner_node: string; generation: number }>('SELECT state, owner_node, generation FROM executions WHERE id = $1', [id]);
    expect(running).toMatchObject({ state: 'running', generation: 1 });
    const owner = running!.owner_node;
    const other: ServerNode = nodes.find((n) => n.nodeId !== owner)!;

    await expectApi(202, other, 'POST', `/v1/chats/${own.id}/stop`, { token: member.secret });
    const { events } = await readEvents(other, member.secret, id, (_, ended) => ended, 30_000);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'cancelled' });
    // The request travelled as the execution's own stored signal, and the owner that ran the Turn ended it (no takeover).
    expect(await query('SELECT name, consumed_at IS NOT NULL AS consumed FROM execution_signals WHERE execution_id = $1', [id])).toEqual([{ name: 'cancel', consumed: true }]);
    expect(await query('SELECT state, owner_node, generation FROM executions WHERE id = $1', [id])).toEqual([{ state: 'cancelled', owner_node: owner, generation: 1 }]);
    expect(owner).toMatch(/^node-[ab]$/);

    // The next message of the same member, posted to the other node, runs wherever it is taken.
    model.enqueue(textReply(['Done.']));
    const next = await expectApi<Admission>(202, other, 'POST', `/v1/chats/${own.id}/messages`, { token: member.secret, body: { content: 'Now briefly' }, headers: { 'idempotency-key': randomUUID() } });
    const after = await readEvents(nodes[0], member.secret, next.executionId, (_, ended) => ended, 30_000);
    expect(after.events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
  });
});

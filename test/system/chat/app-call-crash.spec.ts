import { randomUUID } from 'node:crypto';
import { FakeOpenAiServer, textReply, toolCallReply } from '../../fakes/fake-openai-server';
import { startSdkServer, type RunningSdkServer } from '../../fakes/mcp-test-servers';
import type { Admission } from '../../support/chat-fixture';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { ADMIN_TOKEN, expectApi, jobsSettled, readEvents, startServerNode, stopAllServerNodes, waitUntil, type ServerNode } from './server-node';

jest.setTimeout(120_000);

const LEASE_SECONDS = 2;

let db: TestDatabase | null = null;
let model: FakeOpenAiServer | null = null;
let mcp: RunningSdkServer | null = null;
/** How often the MCP server's handlers ran (the effects). */
const counts = { write: 0, peek: 0, look: 0 };
/** The `look` tool's schema: a test changes it while its call is in flight. */
let lookProperties: Record<string, unknown> = { q: { type: 'string' } };
/** Releases the answers that are never meant to come (at the end, so the server can close). */
const held: Array<() => void> = [];

beforeAll(async () => {
  [db, model] = await Promise.all([createTestDatabase(), FakeOpenAiServer.start()]);
  mcp = await startSdkServer({
    era: 'legacy',
    tools: () => [
      {
        name: 'write_record',
        inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
        // Unsafe: it counts, then never answers while its caller lives.
        handler: () => {
          counts.write += 1;
          return new Promise((resolve) => held.push(() => resolve({ text: 'written (too late)' })));
        },
      },
      {
        name: 'look',
        annotations: { readOnlyHint: true },
        inputSchema: { type: 'object', properties: lookProperties },
        handler: () => {
          counts.look += 1;
          return new Promise((resolve) => held.push(() => resolve({ text: 'looked (too late)' })));
        },
      },
      {
        name: 'peek',
        annotations: { readOnlyHint: true },
        inputSchema: { type: 'object' },
        handler: () => {
          counts.peek += 1;
          if (counts.peek === 1) return new Promise((resolve) => held.push(() => resolve({ text: 'peeked (too late)' })));
          return Promise.resolve({ text: 'peeked' });
        },
      },
    ],
  });
});

afterAll(async () => {
  for (const release of held) release();
  await stopAllServerNodes();
  await mcp?.close();
  await model?.close();
  await db?.drop().catch(() => undefined);
});

/** An organization with a provider for the fake model, an App on the MCP server, its connection, a Bot with its two tools, and a Chat. */
async function appChat(node: ServerNode, names: string[] = ['write_record', 'peek']): Promise<{ token: string; chatId: string; connectionId: string }> {
  const org = await expectApi<{ apiKey: { secret: string } }>(201, node, 'POST', '/v1/organizations', { token: ADMIN_TOKEN, body: { name: `App crash ${randomUUID().slice(0, 6)}` } });
  const token = org.apiKey.secret;
  await expectApi(201, node, 'POST', '/v1/model-providers', { token, body: { name: 'fake', kind: 'openai-compatible', baseUrl: model!.baseUrl } });
  const app = await expectApi<{ id: string }>(201, node, 'POST', '/v1/apps', { token, body: { url: mcp!.url } });
  const connection = await expectApi<{ id: string; state: string }>(201, node, 'POST', `/v1/apps/${app.id}/connections`, { token, body: {} });
  expect(connection.state).toBe('ready');
  const bot = await expectApi<{ id: string }>(201, node, 'POST', '/v1/bots', {
    token,
    body: { name: 'App Bot', model: 'fake/gpt-test', instructions: 'Use the tools.', tools: [{ kind: 'app', connectionId: connection.id, tools: names }] },
  });
  const chat = await expectApi<{ id: string }>(201, node, 'POST', '/v1/chats', { token, body: { botId: bot.id } });
  return { token, chatId: chat.id, connectionId: connection.id };
}

async function send(node: ServerNode, token: string, chatId: string, content: string): Promise<string> {
  const admitted = await expectApi<Admission>(202, node, 'POST', `/v1/chats/${chatId}/messages`, { token, body: { content }, headers: { 'idempotency-key': randomUUID() } });
  return admitted.executionId;
}

/**
 * kill -9 of the node that owns a Turn while its App call is in flight (two real server
 * processes on one database, the MCP server and the scripted model in this jest process). The
 * other node takes the Turn over once the lease ran out and reads the call's saved intent: an
 * unsafe `tools/call` (no hint) whose answer is lost waits in outcome_unknown and is never sent
 * again; a `readOnlyHint` call is sent again (a new attempt, on a session of the new owner) and
 * its answer used.
 */
describe('an App call whose owner node dies mid-call (two real server processes)', () => {
  it('[CALL-03][RES-07] kill -9 mid unsafe App call: the other node leaves it in outcome_unknown; the MCP server saw exactly one call', async () => {
    const [a, b] = await Promise.all([
      startServerNode({ databaseUrl: db!.url, nodeId: 'app-node-a', leaseSeconds: LEASE_SECONDS }),
      startServerNode({ databaseUrl: db!.url, nodeId: 'app-node-b', leaseSeconds: LEASE_SECONDS }),
    ]);
    const { token, chatId } = await appChat(a);
    model!.enqueue(toolCallReply('w1', 'write_record', ['{"id":"r-1"}']));
    const id = await send(a, token, chatId, 'Write the record');
    await waitUntil(async () => (counts.write === 1 ? true : undefined), 20_000, () => 'the MCP server never received the call');
    const calling = await readEvents(b, token, id, (events) => events.some((e) => e.type === 'tool.called'), 15_000);
    expect(calling.events.find((e) => e.type === 'tool.called')).toMatchObject({ name: 'write_record', app: { revision: 1 } });

    expect(await a.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });

    await waitUntil(
      async () => {
        const execution = await expectApi<{ state: string }>(200, b, 'GET', `/v1/executions/${id}`, { token });
        return execution.state === 'outcome_unknown' ? execution : undefined;
      },
      40_000,
      () => `the Turn never reached outcome_unknown\n${b.tail()}`,
    );
    const [row] = await db!.query<{ generation: number; owner_node: string | null }>('SELECT generation, owner_node FROM executions WHERE id = $1', [id]);
    expect(row!.generation).toBeGreaterThanOrEqual(2);
    expect(counts.write).toBe(1);
    expect(mcp!.requests.filter((r) => r.rpc === 'tools/call')).toHaveLength(1);
    // The dead node's scope is not proven released (no close result); nothing else was sent.
    const scopes = await db!.query<{ node_id: string; close_result: unknown }>(
      `SELECT s.node_id, s.close_result FROM app_connection_scopes s WHERE s.execution_id = $1`,
      [id],
    );
    expect(scopes).toEqual([{ node_id: 'app-node-a', close_result: null }]);
    expect(model!.requests).toHaveLength(1);
    expect(b.exit).toBeNull();
  });

  it('[CALL-03][RES-07] kill -9 mid readOnlyHint App call: the other node sends it again on a session of its own and finishes the Turn with its answer', async () => {
    const [a, b] = await Promise.all([
      startServerNode({ databaseUrl: db!.url, nodeId: 'app-node-c', leaseSeconds: LEASE_SECONDS }),
      startServerNode({ databaseUrl: db!.url, nodeId: 'app-node-d', leaseSeconds: LEASE_SECONDS }),
    ]);
    const { token, chatId } = await appChat(a);
    const start = model!.requests.length;
    const from = mcp!.requests.length;
    model!.enqueue(toolCallReply('p1', 'peek', ['{}']), textReply(['Peeked it.']));
    const id = await send(a, token, chatId, 'Peek');
    await waitUntil(async () => (counts.peek === 1 ? true : undefined), 20_000, () => 'the MCP server never received the call');

    expect(await a.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });

    const { events, ended } = await readEvents(b, token, id, (_, end) => end, 40_000);
    expect(ended).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(counts.peek).toBe(2);
    const toolMessages = (model!.requests[start + 1]!.body as { messages: Array<{ role: string; content: string }> }).messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(toolMessages).toEqual(['peeked']);
    // Two sends, each on its owner's own session.
    const sessions = mcp!.requests.slice(from).filter((r) => r.rpc === 'tools/call').map((r) => r.sessionId);
    expect(sessions).toHaveLength(2);
    expect(sessions[0]).not.toBe(sessions[1]);
    const scopes = await db!.query<{ node_id: string }>('SELECT node_id FROM app_connection_scopes WHERE execution_id = $1 ORDER BY opened_at', [id]);
    // The second is a session of the node that took over (node B of the first test is alive too and may be the one).
    expect(scopes).toHaveLength(2);
    expect(scopes[0]!.node_id).toBe('app-node-c');
    expect(['app-node-b', 'app-node-d']).toContain(scopes[1]!.node_id);
    await jobsSettled((sql, params) => db!.query(sql, params), id, 2 * LEASE_SECONDS + 1, 15_000);
    expect(counts.peek).toBe(2);
    expect(b.exit).toBeNull();
  });

  it('[STC-12] a restored phase looks its App call up and checks it again: the tool changed (and a check saw it) while the owner’s call was in flight, so the new owner refuses the repeat and sends nothing', async () => {
    const [a, b] = await Promise.all([
      startServerNode({ databaseUrl: db!.url, nodeId: 'app-node-e', leaseSeconds: 4 }),
      startServerNode({ databaseUrl: db!.url, nodeId: 'app-node-f', leaseSeconds: 4 }),
    ]);
    const { token, chatId, connectionId } = await appChat(a, ['look']);
    const start = model!.requests.length;
    model!.enqueue(toolCallReply('l1', 'look', ['{"q":"x"}']), textReply(['It changed.']));
    const id = await send(a, token, chatId, 'Look');
    await waitUntil(async () => (counts.look === 1 ? true : undefined), 20_000, () => 'the MCP server never received the call');

    // While A's call is in flight, the tool changes and a check records it (revision 2).
    lookProperties = { q: { type: 'string' }, limit: { type: 'integer' } };
    const check = await expectApi<{ executionId: string }>(202, b, 'POST', `/v1/connections/${connectionId}/check`, { token, body: {} });
    await waitUntil(
      async () => ((await expectApi<{ state: string }>(200, b, 'GET', `/v1/executions/${check.executionId}`, { token })).state === 'completed' ? true : undefined),
      20_000,
      () => 'the check did not complete',
    );
    expect(await expectApi<{ revision: number }>(200, b, 'GET', `/v1/connections/${connectionId}`, { token })).toMatchObject({ revision: 2 });
    expect(await a.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });

    const { events, ended } = await readEvents(b, token, id, (_, end) => end, 40_000);
    expect(ended).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ isError: true, category: 'unavailable', errorId: expect.any(String) });
    const toolMessages = (model!.requests[start + 1]!.body as { messages: Array<{ role: string; content: string }> }).messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(toolMessages[0]).toMatch(/the tool changed on its server since it was saved \(connection revision 1 → 2\)/);
    expect(counts.look).toBe(1);
    expect(b.exit).toBeNull();
  });
});

import { newId } from '@openbot/domain';
import { Engine, type Workflow } from '@openbot/engine';
import { get as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openSse } from '../support/sse-client';
import { startTestApp, type TestApp } from '../support/test-app';
import { ticksWorkflow } from '../support/ticks-workflow';

/**
 * A node's shutdown and its event readers (docs/http-api.md "Executions and events"): two nodes
 * on one PostgreSQL. Node P shuts down while a client follows an execution on it with SSE and
 * another waits in a long poll. Both end cleanly at once, so P's HTTP server closes instead of
 * holding them until its shutdown timeout; the stream resumes on node Q with Last-Event-ID.
 */

type Org = Awaited<ReturnType<TestApp['createOrganization']>>;

const ticks = ticksWorkflow('e2e.shutdown.ticks');

async function listen(t: TestApp): Promise<number> {
  t.app.get(Engine).register(ticks as unknown as Workflow);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.app.getHttpServer().address() as AddressInfo).port;
}

/** One GET with a JSON answer, over its own connection. */
function getJson(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const request = httpGet({ host: '127.0.0.1', port, path, agent: false, headers: { accept: 'application/json', ...headers } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as unknown }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

describe('event readers when their node shuts down', () => {
  let q: TestApp;
  let p: TestApp | null = null;
  let portP: number;
  let portQ: number;
  let acme: Org;

  beforeAll(async () => {
    // Q owns the database, so P can stop alone. The shutdown timeout is far longer than this
    // test's: a shutdown that waited for its readers would fail the test, not pass it slowly.
    q = await startTestApp({ env: { OPENBOT_NODE_ID: 'shutdown-q' } });
    p = await startTestApp({ database: q.database, masterKey: q.config.masterKey, env: { OPENBOT_NODE_ID: 'shutdown-p', OPENBOT_SHUTDOWN_TIMEOUT_MS: '600000' } });
    portQ = await listen(q);
    portP = await listen(p);
    acme = await q.createOrganization('Shutdown');
  });
  afterAll(async () => {
    await p?.close();
    await q?.close();
  });

  it('[EVT-03] SIGTERM-style close: an SSE stream ends with a resume comment and a waiting poll answers at once; the stream resumes on the other node with nothing lost', async () => {
    const auth = { authorization: `Bearer ${acme.secret}` };
    const engine = q.app.get(Engine);
    const { executionId: id } = await engine.submit({
      workflow: ticks.name,
      input: { k: 2 },
      scope: { kind: 'member', id: acme.memberId, organizationId: acme.organizationId },
      resource: { type: 'turn', id: newId() },
    });
    for await (const event of engine.observe(id, 0)) if (event.seq >= 1) break;

    const stream = await openSse(portP, `/v1/executions/${id}/events`, auth);
    expect(stream.status).toBe(200);
    await stream.waitFor('id: 1\n');
    // The execution waits for `go`: nothing else would end the stream or answer the poll.
    const poll = getJson(portP, `/v1/executions/${id}/events?after=1&wait=30`, auth);
    await eventuallyWaiting(p!);

    await p!.close();
    p = null;

    await stream.ended;
    expect(stream.text()).toContain(': node shutting down; resume with Last-Event-ID');
    expect(stream.text()).not.toContain('event: error');
    expect(await poll).toEqual({ status: 200, body: { events: [], next: 1, ended: false } });

    const resumed = await openSse(portQ, `/v1/executions/${id}/events`, { ...auth, 'last-event-id': '1' });
    expect(resumed.status).toBe(200);
    await engine.signal(id, 'go');
    await resumed.waitFor('event: execution.ended');
    expect([...resumed.text().matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([2, 3]);
  });
});

/** Until P holds two stream slots (the SSE stream and the waiting poll): both are open on it. */
async function eventuallyWaiting(t: TestApp): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const rows = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM event_stream_slots WHERE node_id = 'shutdown-p' AND expires_at > now()`);
    if (rows[0]!.n >= 2) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the stream and the poll never both held a slot on P');
}

import { createOpenbotClient, streamEvents } from '@openbot/client';
import { newId } from '@openbot/domain';
import { Engine, type Workflow } from '@openbot/engine';
import type { AddressInfo } from 'node:net';
import { Database } from '../../libs/platform/src/database/sql';
import { addMember } from '../support/chat-fixture';
import { openSse, type OpenSse } from '../support/sse-client';
import { startTestApp, type TestApp } from '../support/test-app';
import { ticksWorkflow } from '../support/ticks-workflow';

/**
 * The caps on open event streams (docs/decisions/017) through real servers on one PostgreSQL:
 * per API key across two nodes (PostgreSQL slots), per node (in memory), the long poll while it
 * waits, and the stream's maximum lifetime, after which the client resumes with Last-Event-ID.
 */

type Org = Awaited<ReturnType<TestApp['createOrganization']>>;

const ticks = ticksWorkflow('e2e.limits.ticks');

const auth = (org: Org): Record<string, string> => ({ authorization: `Bearer ${org.secret}` });
const eventsPath = (id: string): string => `/v1/executions/${id}/events`;

async function listen(t: TestApp): Promise<number> {
  t.app.get(Engine).register(ticks as unknown as Workflow);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.app.getHttpServer().address() as AddressInfo).port;
}

/** An execution of `ticks` whose first event exists; it then waits for `go`. */
async function running(t: TestApp, org: Org, k = 2): Promise<string> {
  const engine = t.app.get(Engine);
  const { executionId } = await engine.submit({
    workflow: ticks.name,
    input: { k },
    scope: { kind: 'member', id: org.memberId, organizationId: org.organizationId },
    resource: { type: 'turn', id: newId() },
  });
  for await (const event of engine.observe(executionId, 0)) if (event.seq >= 1) break;
  return executionId;
}

/** Polls a condition the servers reach on their own (a released slot), never the clock. */
async function eventually(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`never happened: ${what}`);
}

async function liveSlots(t: TestApp, org: Org): Promise<number> {
  const rows = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM event_stream_slots WHERE credential = $1 AND expires_at > now()`, [`key:${org.apiKeyId}`]);
  return rows[0]!.n;
}

async function expectRateLimited(stream: OpenSse): Promise<{ type: string; message: string }> {
  await stream.ended;
  expect({ status: stream.status, retryAfter: stream.headers['retry-after'] }).toEqual({ status: 429, retryAfter: expect.stringMatching(/^[1-9]\d*$/) });
  const body = JSON.parse(stream.text()) as { type: string; message: string };
  expect(body.type).toBe('RateLimited');
  return body;
}

describe('event stream caps across two nodes', () => {
  let p: TestApp;
  let q: TestApp;
  let portP: number;
  let portQ: number;
  const open: OpenSse[] = [];
  const sse = async (port: number, id: string, org: Org, headers: Record<string, string> = {}): Promise<OpenSse> => {
    const stream = await openSse(port, eventsPath(id), { ...auth(org), ...headers });
    open.push(stream);
    return stream;
  };
  const caps = { OPENBOT_STREAMS_PER_KEY: '2', OPENBOT_STREAMS_PER_NODE: '3' };

  beforeAll(async () => {
    p = await startTestApp({ env: { ...caps, OPENBOT_NODE_ID: 'limits-p' } });
    q = await startTestApp({ database: p.database, masterKey: p.config.masterKey, env: { ...caps, OPENBOT_NODE_ID: 'limits-q' } });
    portP = await listen(p);
    portQ = await listen(q);
  });
  afterEach(async () => {
    for (const stream of open.splice(0)) stream.close();
    await eventually(async () => (await p.database.query<{ n: number }>('SELECT count(*)::int AS n FROM event_stream_slots'))[0]!.n === 0, 'every slot released');
  });
  afterAll(async () => {
    await q?.close();
    await p?.close();
  });

  it('security: an API key gets at most OPENBOT_STREAMS_PER_KEY streams on all nodes together; a closed one frees its slot', async () => {
    const acme = await p.createOrganization('Streams A');
    const id = await running(p, acme);
    const first = await sse(portP, id, acme);
    const second = await sse(portQ, id, acme);
    expect([first.status, second.status]).toEqual([200, 200]);
    await first.waitFor('event: probe.tick');
    await second.waitFor('event: probe.tick');

    // Over the cap on either node: 429 RateLimited with Retry-After, as an ordinary JSON answer.
    for (const port of [portP, portQ]) expect((await expectRateLimited(await sse(port, id, acme))).message).toMatch(/credential/);
    // Another key is not affected.
    const other = await p.createOrganization('Streams B');
    expect((await sse(portP, await running(p, other), other)).status).toBe(200);

    first.close();
    await eventually(async () => (await liveSlots(p, acme)) === 1, 'the closed stream released its slot');
    const again = await sse(portQ, id, acme);
    expect(again.status).toBe(200);
    await again.waitFor('event: probe.tick');
  });

  it('security: streams opened at the same moment on both nodes never exceed the per-key cap', async () => {
    const acme = await p.createOrganization('Streams race');
    const id = await running(p, acme);
    const streams = await Promise.all([portP, portQ, portP, portQ, portP, portQ].map((port) => sse(port, id, acme)));
    expect(streams.map((s) => s.status).sort()).toEqual([200, 200, 429, 429, 429, 429]);
    expect(await liveSlots(p, acme)).toBe(2);
  });

  it('security: a long poll holds a stream slot while it waits, not when it answers at once', async () => {
    const acme = await p.createOrganization('Polls');
    const id = await running(p, acme, 3);
    const waiting = p.http().get(`${eventsPath(id)}?after=1&wait=30`).set(auth(acme)).then((r) => r);
    await eventually(async () => (await liveSlots(p, acme)) === 1, 'the waiting poll holds a slot');
    expect((await sse(portQ, id, acme)).status).toBe(200);
    await expectRateLimited(await sse(portP, id, acme));
    const refusedPoll = await q.http().get(`${eventsPath(id)}?after=1&wait=5`).set(auth(acme));
    expect({ status: refusedPoll.status, type: (refusedPoll.body as { type?: string }).type, retryAfter: refusedPoll.headers['retry-after'] }).toEqual({
      status: 429,
      type: 'RateLimited',
      retryAfter: expect.stringMatching(/^[1-9]\d*$/),
    });
    // A poll with events to answer does not wait, so it is not capped.
    expect((await q.http().get(`${eventsPath(id)}?after=0&wait=5`).set(auth(acme))).status).toBe(200);

    await p.app.get(Engine).signal(id, 'go');
    const answered = await waiting;
    expect({ status: answered.status, seqs: (answered.body as { events: Array<{ seq: number }> }).events.map((e) => e.seq) }).toEqual({ status: 200, seqs: [2] });
    await eventually(async () => (await liveSlots(p, acme)) === 1, 'the answered poll released its slot');
  });

  it('security: a node holds at most OPENBOT_STREAMS_PER_NODE streams; the other node still serves', async () => {
    const orgs = [];
    for (let i = 0; i < 4; i++) orgs.push(await p.createOrganization(`Node cap ${i}`));
    const ids = [];
    for (const org of orgs) ids.push(await running(p, org));
    for (let i = 0; i < 3; i++) expect((await sse(portQ, ids[i]!, orgs[i]!)).status).toBe(200);
    expect((await expectRateLimited(await sse(portQ, ids[3]!, orgs[3]!))).message).toMatch(/node/);
    expect((await sse(portP, ids[3]!, orgs[3]!)).status).toBe(200);
  });
});

describe("event streams under the organization's and the key's caps together (decision 076)", () => {
  let p: TestApp;
  let q: TestApp;
  let portP: number;
  let portQ: number;
  const open: OpenSse[] = [];
  const caps = { OPENBOT_STREAMS_PER_KEY: '2', OPENBOT_ORG_STREAMS: '3', OPENBOT_STREAMS_PER_NODE: '50' };

  beforeAll(async () => {
    p = await startTestApp({ env: { ...caps, OPENBOT_NODE_ID: 'org-slots-p' } });
    q = await startTestApp({ database: p.database, masterKey: p.config.masterKey, env: { ...caps, OPENBOT_NODE_ID: 'org-slots-q' } });
    portP = await listen(p);
    portQ = await listen(q);
  });
  afterEach(async () => {
    for (const stream of open.splice(0)) stream.close();
    await eventually(async () => (await p.database.query<{ n: number }>('SELECT count(*)::int AS n FROM event_stream_slots'))[0]!.n === 0, 'every slot released');
  });
  afterAll(async () => {
    await q?.close();
    await p?.close();
  });

  it('opening and closing a stream is one statement taking both slots and one statement freeing both', async () => {
    const acme = await p.createOrganization('One statement each');
    const id = await running(p, acme);
    // Observes the node's pool: every named statement still goes to PostgreSQL as before.
    const pool = p.app.get(Database).pool as unknown as { query: (...args: unknown[]) => unknown };
    const query = pool.query.bind(pool);
    const names: string[] = [];
    pool.query = (...args: unknown[]) => {
      const first = args[0] as { name?: unknown } | undefined;
      if (typeof first === 'object' && typeof first.name === 'string' && first.name.includes('stream_slot')) names.push(first.name);
      return query(...args);
    };
    try {
      const stream = await openSse(portP, eventsPath(id), auth(acme));
      expect(stream.status).toBe(200);
      await stream.waitFor('event: probe.tick');
      const live = await p.database.query<{ credential: string }>('SELECT credential FROM event_stream_slots WHERE expires_at > now() ORDER BY credential');
      expect(live.map((r) => r.credential)).toEqual([`key:${acme.apiKeyId}`, `organization:${acme.organizationId}`]);
      stream.close();
      await eventually(async () => (await p.database.query<{ n: number }>('SELECT count(*)::int AS n FROM event_stream_slots'))[0]!.n === 0, 'both slots freed');
    } finally {
      delete (pool as { query?: unknown }).query;
    }
    expect(names).toEqual(['limits.take_stream_slots', 'limits.release_stream_slots']);
  });

  it("security: streams of two organizations' keys opened at the same moment on both nodes never exceed the organization's nor any key's cap", async () => {
    const acme = await p.createOrganization('Org race A');
    const second = await addMember(p, acme.organizationId);
    const other = await p.createOrganization('Org race B');
    const [acmeRun, otherRun] = [await running(p, acme), await running(p, other)];
    const asks = [
      ...Array.from({ length: 4 }, () => ({ org: 'a', secret: acme.secret, id: acmeRun, who: 'a-owner' })),
      ...Array.from({ length: 4 }, () => ({ org: 'a', secret: second.secret, id: acmeRun, who: 'a-second' })),
      ...Array.from({ length: 4 }, () => ({ org: 'b', secret: other.secret, id: otherRun, who: 'b-owner' })),
    ];
    const streams = await Promise.all(
      asks.map(async (ask, i) => {
        const stream = await openSse(i % 2 === 0 ? portP : portQ, eventsPath(ask.id), { authorization: `Bearer ${ask.secret}` });
        open.push(stream);
        if (stream.status !== 200) await stream.ended;
        return { ...ask, stream };
      }),
    );
    const admitted = (filter: (s: (typeof streams)[number]) => boolean): number => streams.filter((s) => filter(s) && s.stream.status === 200).length;
    for (const { stream } of streams.filter((s) => s.stream.status !== 200)) {
      expect(stream.status).toBe(429);
      const body = JSON.parse(stream.text()) as { type: string; limit?: string; message: string };
      expect(body.type).toBe('RateLimited');
      expect(body.limit === 'streams' || /credential/.test(body.message)).toBe(true);
    }
    const rows = await p.database.query<{ credential: string; n: number }>('SELECT credential, count(*)::int AS n FROM event_stream_slots WHERE expires_at > now() GROUP BY credential');
    const live = new Map(rows.map((r) => [r.credential, r.n]));
    for (const [credential, n] of live) expect({ credential, n: Math.min(n, credential.startsWith('organization:') ? 3 : 2) }).toEqual({ credential, n });
    // Every admitted stream holds exactly its two slots; a refused one left none behind.
    expect(live.get(`organization:${acme.organizationId}`) ?? 0).toBe(admitted((s) => s.org === 'a'));
    expect(live.get(`organization:${other.organizationId}`) ?? 0).toBe(admitted((s) => s.org === 'b'));
    expect(live.get(`key:${acme.apiKeyId}`) ?? 0).toBe(admitted((s) => s.who === 'a-owner'));
    expect(live.get(`key:${other.apiKeyId}`) ?? 0).toBe(admitted((s) => s.who === 'b-owner'));
    expect(rows.filter((r) => r.credential.startsWith('key:')).reduce((sum, r) => sum + r.n, 0)).toBe(admitted(() => true));
    expect(admitted((s) => s.org === 'a')).toBeGreaterThanOrEqual(1);
    expect(admitted((s) => s.org === 'b')).toBeGreaterThanOrEqual(1);
    expect(admitted((s) => s.org === 'a')).toBeLessThanOrEqual(3);
    expect(admitted((s) => s.org === 'b')).toBeLessThanOrEqual(2);
  });
});

describe('event stream lifetime', () => {
  let t: TestApp;
  let port: number;
  let acme: Org;

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_STREAM_MAX_SECONDS: '1' } });
    port = await listen(t);
    acme = await t.createOrganization('Lifetime');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('security: an SSE stream ends cleanly at OPENBOT_STREAM_MAX_SECONDS and frees its slot; Last-Event-ID resumes it', async () => {
    const id = await running(t, acme);
    const stream = await openSse(port, eventsPath(id), auth(acme));
    expect(stream.status).toBe(200);
    await stream.waitFor('id: 1\n');
    // The execution still waits for `go`: only the lifetime ends this stream.
    await stream.ended;
    expect(stream.text()).toContain(': lifetime reached; resume with Last-Event-ID');
    expect(stream.text()).not.toContain('event: error');
    await eventually(async () => (await liveSlots(t, acme)) === 0, 'the ended stream released its slot');

    const resumed = await openSse(port, eventsPath(id), { ...auth(acme), 'last-event-id': '1' });
    expect(resumed.status).toBe(200);
    await t.app.get(Engine).signal(id, 'go');
    await resumed.waitFor('event: execution.ended');
    expect([...resumed.text().matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([2, 3]);
  });

  it('security: the generated client resumes across lifetime ends with no duplicate and no gap', async () => {
    const id = await running(t, acme, 3);
    const engine = t.app.get(Engine);
    const client = createOpenbotClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: acme.secret });
    const seqs: number[] = [];
    const resumedAfter: number[] = [];
    const onReconnect = ({ after }: { after: number }): void => {
      resumedAfter.push(after);
      // Each new event exists only after a lifetime end: the next stream must pick it up.
      void engine.signal(id, 'go');
    };
    for await (const item of streamEvents(client, id, { minDelayMs: 10, maxDelayMs: 50, onReconnect })) if (item.seq !== null) seqs.push(item.seq);
    expect(seqs).toEqual([1, 2, 3, 4]);
    expect(resumedAfter.slice(0, 2)).toEqual([1, 2]);
  });
});

describe('event streams of one key opened at the same moment, below the cap', () => {
  let t: TestApp;
  let port: number;
  const open: OpenSse[] = [];

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_STREAMS_PER_KEY: '100', OPENBOT_NODE_ID: 'limits-burst' } });
    port = await listen(t);
  });
  afterAll(async () => {
    for (const stream of open.splice(0)) stream.close();
    await t?.close();
  });

  it('security: 30 streams of one key opened at once all get a slot while the cap has room (a lost slot race is not a refusal)', async () => {
    const acme = await t.createOrganization('Streams burst');
    const id = await running(t, acme);
    const streams = await Promise.all(Array.from({ length: 30 }, () => openSse(port, eventsPath(id), auth(acme))));
    open.push(...streams);
    expect(streams.map((s) => s.status)).toEqual(Array.from({ length: 30 }, () => 200));
    expect(await liveSlots(t, acme)).toBe(30);
  });
  it('security: 30 streams of one key that end together free every slot, in a few grouped statements (decision 058)', async () => {
    const acme = await t.createOrganization('Streams end together');
    const credential = `key:${acme.apiKeyId}`;
    // Counts the statements that freed this key's slots (a statement trigger sees all its rows).
    await t.database.query(`CREATE TABLE slot_release_statements (rows int NOT NULL)`);
    await t.database.query(`CREATE FUNCTION count_slot_releases() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO slot_release_statements (rows) SELECT count(*) FROM gone WHERE credential = '${credential}' HAVING count(*) > 0;
        RETURN NULL;
      END $$`);
    await t.database.query(`CREATE TRIGGER count_slot_releases AFTER DELETE ON event_stream_slots REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION count_slot_releases()`);
    try {
      const id = await running(t, acme, 2);
      const streams = await Promise.all(Array.from({ length: 30 }, () => openSse(port, eventsPath(id), auth(acme))));
      open.push(...streams);
      expect(await liveSlots(t, acme)).toBe(30);
      // One signal ends the execution: every stream gets execution.ended at the same moment.
      await t.app.get(Engine).signal(id, 'go');
      await Promise.all(streams.map((stream) => stream.ended));
      expect(streams.every((stream) => stream.text().includes('event: execution.ended'))).toBe(true);
      await eventually(async () => (await liveSlots(t, acme)) === 0, 'every slot freed');
      const statements = await t.database.query<{ rows: number }>('SELECT rows FROM slot_release_statements');
      expect(statements.reduce((sum, s) => sum + s.rows, 0)).toBe(30);
      // One statement per stream would be 30; the first goes at once and the rest wait for it.
      expect(statements.length).toBeLessThanOrEqual(5);
    } finally {
      await t.database.query('DROP TRIGGER count_slot_releases ON event_stream_slots');
      await t.database.query('DROP FUNCTION count_slot_releases()');
    }
  });
});

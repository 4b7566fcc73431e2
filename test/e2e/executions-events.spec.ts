import { newId } from '@openbot/domain';
import { Engine, type Json, type Workflow } from '@openbot/engine';
import { randomBytes } from 'node:crypto';
import { get as httpGet, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Response } from 'supertest';
import { DataSource } from 'typeorm';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * `GET /v1/executions/{id}/events` (docs/http-api.md "Executions and events", EVT-01..03, RES-03, ERR-03): the JSON
 * long poll through supertest, and Server-Sent Events read incrementally from a real listening
 * server with node's http client. Executions are driven by signals, never by the clock.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

type Org = Awaited<ReturnType<TestApp['createOrganization']>>;

interface TicksState {
  [key: string]: Json;
  n: number;
  k: number;
}

/**
 * `k` phases; each emits `probe.tick { n }`. Every phase but the last then waits for a `go`
 * signal, so each new event exists only once the test signals.
 */
const ticks: Workflow<TicksState, { k: number }> = {
  name: 'e2e.events.ticks',
  initial: ({ k }) => ({ n: 0, k }),
  next: (s) => (s.n < s.k ? { phase: 'tick' } : { end: 'completed', result: { n: s.n } }),
  phases: {
    tick: {
      async run({ state, emit }) {
        const n = state.n + 1;
        emit('probe.tick', { n, note: `tick ${n}` });
        return n < state.k ? { state: { ...state, n }, wait: { signals: ['go'] } } : { state: { ...state, n } };
      },
    },
  },
};

/** Test-side hooks of the `held` workflow, keyed by a tag in its input. */
const reached = new Map<string, () => void>();
const releases = new Map<string, Promise<void>>();
const abortedTags = new Set<string>();

/** Phase 1 emits `probe.tick`; phase 2 runs until the test releases it (or its gate closes). */
const held: Workflow<{ [key: string]: Json; tag: string; phase: number }, { tag: string }> = {
  name: 'e2e.events.held',
  initial: ({ tag }) => ({ tag, phase: 0 }),
  next: (s) => (s.phase === 0 ? { phase: 'intro' } : s.phase === 1 ? { phase: 'work' } : { end: 'completed' }),
  phases: {
    intro: {
      async run({ state, emit }) {
        emit('probe.tick', { n: 1 });
        return { state: { ...state, phase: 1 } };
      },
    },
    work: {
      async run({ state, emit, signal }) {
        reached.get(state.tag)?.();
        signal.addEventListener('abort', () => abortedTags.add(state.tag), { once: true });
        await releases.get(state.tag);
        if (signal.aborted) throw new Error('the phase gate closed');
        emit('probe.done', { n: 2 });
        return { state: { ...state, phase: 2 } };
      },
    },
  },
};

interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  comments: string[];
}

/** An SSE response read incrementally: `next()` answers the next frame with data, or null at the end. */
interface SseStream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Every byte received so far, as text. */
  readonly raw: () => string;
  readonly request: ClientRequest;
  readonly response: IncomingMessage;
  /** The local port of the client socket (to find the server's side of the connection). */
  readonly localPort: number;
  next(): Promise<SseFrame | null>;
  /** Resolves when the server has ended the response. */
  readonly ended: Promise<void>;
  /** Reads the frames until the server ends the stream. */
  rest(): Promise<SseFrame[]>;
}

function parseFrame(block: string): SseFrame {
  const frame: SseFrame = { comments: [] };
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) frame.comments.push(line.slice(1).trim());
    else {
      const at = line.indexOf(':');
      const field = at < 0 ? line : line.slice(0, at);
      const value = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '');
      if (field === 'id') frame.id = value;
      else if (field === 'event') frame.event = value;
      else if (field === 'data') frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`;
      else throw new Error(`unexpected SSE line: ${line}`);
    }
  }
  return frame;
}

describe('Execution events API', () => {
  let t: TestApp;
  let engine: Engine;
  let db: DataSource;
  let port: number;
  let acme: Org;
  let other: Org;
  /** Server-side sockets by the client's port. */
  const serverSockets = new Map<number, Socket>();
  const as = (org: Org): string => `Bearer ${org.secret}`;

  async function submit(workflow: string, input: Json, org: Org = acme): Promise<string> {
    const { executionId } = await engine.submit({
      workflow,
      input,
      scope: { kind: 'member', id: org.memberId, organizationId: org.organizationId },
      resource: { type: 'turn', id: newId() },
    });
    return executionId;
  }

  /** Waits (by following the log, no clock) until the event with `seq` exists. */
  async function eventExists(id: string, seq: number): Promise<void> {
    for await (const event of engine.observe(id, seq - 1)) if (event.seq >= seq) return;
    throw new Error(`execution ${id} ended before event ${seq}`);
  }

  function poll(id: string, query: string, org: Org = acme): Promise<Response> {
    return t.http().get(`/v1/executions/${id}/events${query}`).set('authorization', as(org)).set('accept', 'application/json');
  }

  function openSse(path: string, headers: Record<string, string> = {}): Promise<SseStream> {
    return new Promise((resolve, reject) => {
      const request = httpGet(
        { host: '127.0.0.1', port, path, agent: false, headers: { accept: 'text/event-stream', authorization: as(acme), ...headers } },
        (response) => {
          response.setEncoding('utf8');
          let raw = '';
          let buffer = '';
          const frames: SseFrame[] = [];
          const waiters: Array<(frame: SseFrame | null) => void> = [];
          let done = false;
          let endedResolve!: () => void;
          const ended = new Promise<void>((r) => (endedResolve = r));
          const flush = (): void => {
            while (waiters.length > 0 && (frames.length > 0 || done)) waiters.shift()!(frames.shift() ?? null);
          };
          response.on('data', (chunk: string) => {
            raw += chunk;
            buffer += chunk;
            for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
              const frame = parseFrame(buffer.slice(0, at));
              buffer = buffer.slice(at + 2);
              if (frame.id !== undefined || frame.event !== undefined || frame.data !== undefined) frames.push(frame);
            }
            flush();
          });
          const finish = (): void => {
            done = true;
            endedResolve();
            flush();
          };
          response.on('end', finish);
          response.on('close', finish);
          response.on('error', finish);
          const stream: SseStream = {
            status: response.statusCode ?? 0,
            headers: response.headers,
            raw: () => raw,
            request,
            response,
            localPort: request.socket?.localPort ?? 0,
            ended,
            next: () =>
              new Promise((r) => {
                waiters.push(r);
                flush();
              }),
            async rest() {
              const out: SseFrame[] = [];
              for (let f = await stream.next(); f !== null; f = await stream.next()) out.push(f);
              return out;
            },
          };
          resolve(stream);
        },
      );
      request.on('error', reject);
    });
  }

  function json(frame: SseFrame | null): Record<string, unknown> {
    expect(frame?.data).toBeDefined();
    return JSON.parse(frame!.data!) as Record<string, unknown>;
  }

  /** A well-formed event frame: `id:` is its seq, `event:` its type, `data:` its JSON. */
  function expectEventFrame(frame: SseFrame | null, seq: number, type: string): Record<string, unknown> {
    expect(frame).not.toBeNull();
    expect({ id: frame!.id, event: frame!.event }).toEqual({ id: String(seq), event: type });
    const data = json(frame);
    expect(data).toMatchObject({ seq, type });
    expect(data.at).toMatch(ISO_TIME);
    return data;
  }

  beforeAll(async () => {
    t = await startTestApp();
    engine = t.app.get(Engine);
    db = t.app.get(DataSource);
    engine.register(ticks as unknown as Workflow);
    engine.register(held as unknown as Workflow);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const server = t.app.getHttpServer();
    server.on('connection', (socket: Socket) => {
      if (socket.remotePort !== undefined) serverSockets.set(socket.remotePort, socket);
    });
    port = (server.address() as AddressInfo).port;
    acme = await t.createOrganization('Acme');
    other = await t.createOrganization('Other');
  });
  afterAll(async () => {
    engine.faults.disarm();
    await t?.close();
  });

  describe('JSON long poll', () => {
    it('`?after=0` answers every current event with `next` = the last seq and `ended`', async () => {
      const finished = await submit('e2e.events.ticks', { k: 1 });
      expect(await engine.waitForEnd(finished)).toBe('completed');
      const res = await poll(finished, '?after=0');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const body = res.body as { events: Array<Record<string, unknown>>; next: number; ended: boolean };
      expect(Object.keys(body).sort()).toEqual(['ended', 'events', 'next']);
      expect(body.events.map((e) => [e.seq, e.type])).toEqual([
        [1, 'probe.tick'],
        [2, 'execution.ended'],
      ]);
      expect(body.events[0]).toEqual({ seq: 1, type: 'probe.tick', at: expect.stringMatching(ISO_TIME), n: 1, note: 'tick 1' });
      expect(body.events[1]).toEqual({ seq: 2, type: 'execution.ended', at: expect.stringMatching(ISO_TIME), state: 'completed' });
      expect({ next: body.next, ended: body.ended }).toEqual({ next: 2, ended: true });

      // Without any Accept header it is JSON too.
      const plain = await t.http().get(`/v1/executions/${finished}/events`).set('authorization', as(acme));
      expect(plain.status).toBe(200);
      expect(plain.body).toEqual(body);

      const running = await submit('e2e.events.ticks', { k: 3 });
      await eventExists(running, 1);
      const live = await poll(running, '?after=0');
      expect(live.body).toEqual({ events: [expect.objectContaining({ seq: 1, type: 'probe.tick', n: 1 })], next: 1, ended: false });
      // One signal per wait: a wake consumes every pending `go` at once.
      await engine.signal(running, 'go');
      await eventExists(running, 2);
      await engine.signal(running, 'go');
      expect(await engine.waitForEnd(running)).toBe('completed');
    });

    it('`?after=<last>&wait=` answers as soon as a new event exists', async () => {
      const id = await submit('e2e.events.ticks', { k: 3 });
      await eventExists(id, 1);
      const pending = poll(id, '?after=1&wait=30').then((r) => r);
      // Give the request a head start so the answer comes from the waiting half (either way, it must hold the new event).
      await new Promise((r) => setTimeout(r, 200));
      expect(await engine.signal(id, 'go')).toBe(true);
      const res = await pending;
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ events: [expect.objectContaining({ seq: 2, type: 'probe.tick', n: 2 })], next: 2, ended: false });

      // The same with the wait of the brief (2 s) and the final events.
      const last = poll(id, '?after=2&wait=2').then((r) => r);
      await engine.signal(id, 'go');
      const end = await last;
      expect(end.status).toBe(200);
      const body = end.body as { events: Array<{ seq: number; type: string }>; next: number; ended: boolean };
      expect(body.events.length).toBeGreaterThan(0);
      expect(body.events[0]).toMatchObject({ seq: 3, type: 'probe.tick' });
      expect(await engine.waitForEnd(id)).toBe('completed');
      const all = (await poll(id, '?after=2&wait=2')).body as typeof body;
      expect(all.events.map((e) => e.seq)).toEqual([3, 4]);
      expect({ next: all.next, ended: all.ended, lastType: all.events.at(-1)!.type }).toEqual({ next: 4, ended: true, lastType: 'execution.ended' });
    });

    it('`wait=1` with nothing new answers { events: [], next: after, ended: false }', async () => {
      const id = await submit('e2e.events.ticks', { k: 2 });
      await eventExists(id, 1);
      const res = await poll(id, '?after=1&wait=1');
      expect(res.status).toBe(200);
      expect(res.body).toStrictEqual({ events: [], next: 1, ended: false });
      await engine.signal(id, 'go');
      expect(await engine.waitForEnd(id)).toBe('completed');
    });

    it('[EVT-03] `?after=` at or past the final event of an ended execution answers { events: [], next: after, ended: true } at once, also with `wait`', async () => {
      const id = await submit('e2e.events.ticks', { k: 1 });
      expect(await engine.waitForEnd(id)).toBe('completed');
      // seq 2 is execution.ended: a client that read it, or one with a cursor past it, learns the end instead of polling on.
      for (const query of ['?after=2', '?after=2&wait=30', '?after=9&wait=30', '?after=9']) {
        const res = await poll(id, query);
        const after = Number(/after=(\d+)/.exec(query)![1]);
        expect({ query, status: res.status, body: res.body as unknown }).toStrictEqual({ query, status: 200, body: { events: [], next: after, ended: true } });
      }
      // Before the end the events still come with it.
      expect((await poll(id, '?after=1&wait=30')).body).toEqual({ events: [expect.objectContaining({ seq: 2, type: 'execution.ended' })], next: 2, ended: true });
    });

    it('answers 400 InvalidInput for `wait` over 30 or a negative or malformed `after`', async () => {
      const id = await submit('e2e.events.ticks', { k: 1 });
      expect(await engine.waitForEnd(id)).toBe('completed');
      const cases: Array<[string, string]> = [
        ['?wait=31', 'wait'],
        ['?after=0&wait=31', 'wait'],
        ['?wait=-1', 'wait'],
        ['?wait=abc', 'wait'],
        ['?after=-1', 'after'],
        ['?after=abc', 'after'],
        ['?after=1.5', 'after'],
      ];
      for (const [query, path] of cases) {
        const res = await poll(id, query);
        expect({ query, status: res.status, type: (res.body as { type?: string }).type }).toEqual({ query, status: 400, type: 'InvalidInput' });
        expect({ query, paths: (res.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path) }).toEqual({ query, paths: [path] });
      }
      expect((await poll(id, '?after=0&wait=30')).status).toBe(200);
    });
  });

  describe('Server-Sent Events', () => {
    it('[EVT-03] streams id/event/data frames with seq rising by exactly 1 from 1, and ends after execution.ended', async () => {
      const id = await submit('e2e.events.ticks', { k: 3 });
      const stream = await openSse(`/v1/executions/${id}/events`);
      expect(stream.status).toBe(200);
      expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
      // The body ends with the connection: no chunk framing around each frame (decision 057).
      expect(stream.headers['transfer-encoding']).toBeUndefined();
      expect(stream.headers.connection).toBe('close');
      const first = expectEventFrame(await stream.next(), 1, 'probe.tick');
      expect(first).toEqual({ seq: 1, type: 'probe.tick', at: expect.stringMatching(ISO_TIME), n: 1, note: 'tick 1' });
      // Each further event exists only after a signal: the stream follows the live log.
      await engine.signal(id, 'go');
      expectEventFrame(await stream.next(), 2, 'probe.tick');
      await engine.signal(id, 'go');
      expectEventFrame(await stream.next(), 3, 'probe.tick');
      const ended = expectEventFrame(await stream.next(), 4, 'execution.ended');
      expect(ended).toEqual({ seq: 4, type: 'execution.ended', at: expect.stringMatching(ISO_TIME), state: 'completed' });
      expect(await stream.next()).toBeNull();
      await stream.ended;
      // Nothing but comments and well-formed frames was sent.
      for (const line of stream.raw().split('\n')) expect(line).toMatch(/^(|: ?.*|id: \d+|event: [a-z.]+|data: \{.*\})$/);

      // The JSON view of the same log: seq 1..4, each `data:` equal to the long-poll event.
      const page = (await poll(id, '?after=0')).body as { events: Array<Record<string, unknown>> };
      expect(page.events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    });

    it('[EVT-03] a reconnect with Last-Event-ID: 2 resumes from seq 3, and the header wins over ?after=0', async () => {
      const id = await submit('e2e.events.ticks', { k: 3 });
      await eventExists(id, 1);
      await engine.signal(id, 'go');
      await eventExists(id, 2);
      const first = await openSse(`/v1/executions/${id}/events?after=0`);
      const seen = [expectEventFrame(await first.next(), 1, 'probe.tick'), expectEventFrame(await first.next(), 2, 'probe.tick')];
      // The client drops the connection after seq 2 and comes back with its last id.
      first.request.destroy();
      await first.ended;
      const resumed = await openSse(`/v1/executions/${id}/events?after=0`, { 'last-event-id': '2' });
      expect(resumed.status).toBe(200);
      await engine.signal(id, 'go');
      const third = expectEventFrame(await resumed.next(), 3, 'probe.tick');
      expect(third).toMatchObject({ n: 3 });
      expectEventFrame(await resumed.next(), 4, 'execution.ended');
      expect(await resumed.next()).toBeNull();

      // A finished execution replays from the cursor and ends at once.
      const replay = await openSse(`/v1/executions/${id}/events?after=0`, { 'last-event-id': '2' });
      const frames = await replay.rest();
      expect(frames.map((f) => [f.id, f.event])).toEqual([
        ['3', 'probe.tick'],
        ['4', 'execution.ended'],
      ]);
      const full = await openSse(`/v1/executions/${id}/events`);
      const all = await full.rest();
      expect(all.map((f) => Number(f.id))).toEqual([1, 2, 3, 4]);
      expect(all.slice(0, 2).map((f) => json(f))).toEqual(seen);
      const afterTwo = await openSse(`/v1/executions/${id}/events?after=2`);
      expect((await afterTwo.rest()).map((f) => f.id)).toEqual(['3', '4']);
    });

    it('[EVT-03] refusals come before the first byte as ordinary JSON errors', async () => {
      const id = await submit('e2e.events.ticks', { k: 1 });
      expect(await engine.waitForEnd(id)).toBe('completed');
      const foreign = await openSse(`/v1/executions/${id}/events`, { authorization: as(other) });
      await foreign.ended;
      expect(foreign.status).toBe(404);
      expect(foreign.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(foreign.raw())).toEqual({ type: 'ExecutionNotFound', message: expect.any(String) });
      const badCursor = await openSse(`/v1/executions/${id}/events`, { 'last-event-id': 'x' });
      await badCursor.ended;
      expect(badCursor.status).toBe(400);
      expect(JSON.parse(badCursor.raw())).toMatchObject({ type: 'InvalidInput', issues: [{ path: 'Last-Event-ID' }] });
    });

    it('[RES-03] closing an SSE stream mid-execution does not cancel the execution: it still completes', async () => {
      const tag = randomBytes(6).toString('hex');
      let release!: () => void;
      releases.set(tag, new Promise<void>((r) => (release = r)));
      const phaseRunning = new Promise<void>((r) => reached.set(tag, r));
      const id = await submit('e2e.events.held', { tag });
      const stream = await openSse(`/v1/executions/${id}/events`);
      expectEventFrame(await stream.next(), 1, 'probe.tick');
      await phaseRunning;
      // The observer goes away while the phase runs; wait until the server's side has closed too.
      const serverSide = serverSockets.get(stream.localPort);
      expect(serverSide).toBeDefined();
      const serverClosed = new Promise<void>((r) => (serverSide!.destroyed ? r() : serverSide!.once('close', () => r())));
      stream.request.destroy();
      await serverClosed;
      release();
      expect(await engine.waitForEnd(id)).toBe('completed');
      expect(abortedTags.has(tag)).toBe(false);
      const view = await t.http().get(`/v1/executions/${id}`).set('authorization', as(acme));
      expect((view.body as { state: string }).state).toBe('completed');
      const cancels = (await db.query(`SELECT count(*)::int AS n FROM execution_signals WHERE execution_id = $1 AND name = 'cancel'`, [id])) as Array<{ n: number }>;
      expect(cancels[0]!.n).toBe(0);
      const page = (await poll(id, '?after=0')).body as { events: Array<{ type: string }> };
      expect(page.events.map((e) => e.type)).toEqual(['probe.tick', 'probe.done', 'execution.ended']);
    });

    it('[RES-03] closing a long poll early does not cancel the execution either', async () => {
      const id = await submit('e2e.events.ticks', { k: 2 });
      await eventExists(id, 1);
      const path = `/v1/executions/${id}/events?after=1&wait=30`;
      const request = httpGet({ host: '127.0.0.1', port, path, agent: false, headers: { authorization: as(acme) } });
      request.on('error', () => undefined);
      const connected = new Promise<void>((r) => request.once('socket', (s) => s.once('connect', () => r())));
      await connected;
      request.destroy();
      await engine.signal(id, 'go');
      expect(await engine.waitForEnd(id)).toBe('completed');
    });

    async function expectFaultFrame(stream: SseStream, expectedFramesBefore: number[]): Promise<string> {
      const frames = await stream.rest();
      expect(frames.map((f) => f.event)).toEqual(['error']);
      const error = frames[0]!;
      expect(error.id).toBeUndefined();
      const data = json(error);
      expect(data).toStrictEqual({ type: 'RequestFailed', category: 'internal', errorId: expect.stringMatching(UUID) });
      const errorId = data.errorId as string;
      const records = (await db.query('SELECT category FROM error_records WHERE id = $1', [errorId])) as unknown[];
      expect(records).toEqual([{ category: 'internal' }]);
      // Nothing but the frames before the fault, the error event and comments: no internal text.
      const raw = stream.raw();
      const allowed = new Set([
        ...expectedFramesBefore.flatMap((seq) => [`id: ${seq}`]),
        'event: probe.tick',
        'event: error',
        `data: ${JSON.stringify(data)}`,
        '',
      ]);
      for (const line of raw.split('\n')) {
        if (line.startsWith(':') || line.startsWith('data: {"n":') || allowed.has(line)) continue;
        throw new Error(`unexpected line in the stream: ${line}`);
      }
      for (const text of ['Sealed', 'sealed', 'envelope', 'Error', 'stack', 'garbage', ' at ']) expect(raw).not.toContain(text);
      return errorId;
    }

    it('[ERR-03] a fault after the stream started is one `event: error` with exactly the RequestFailed fields, then the stream closes', async () => {
      const id = await submit('e2e.events.ticks', { k: 2 });
      const stream = await openSse(`/v1/executions/${id}/events`);
      expect(stream.status).toBe(200);
      expectEventFrame(await stream.next(), 1, 'probe.tick');
      // The next event's sealed payload is corrupted right after its checkpoint commits, before readers are woken.
      engine.faults.arm(
        'checkpoint.committed',
        {
          kind: 'call',
          run: async () => {
            await db.query(`UPDATE execution_events SET data = 'garbage'::bytea WHERE execution_id = $1 AND seq = $2`, [id, 2]);
          },
        },
        { when: (c) => c.executionId === id },
      );
      await engine.signal(id, 'go');
      const errorId = await expectFaultFrame(stream, [1]);
      await stream.ended;
      // The execution itself is unaffected; a reader resumes past the broken event from its cursor.
      for await (const event of engine.observe(id, 2)) if (event.type === 'execution.ended') break;
      const resumed = await openSse(`/v1/executions/${id}/events`, { 'last-event-id': '2' });
      expect((await resumed.rest()).map((f) => [f.id, f.event])).toEqual([['3', 'execution.ended']]);
      // Resuming from before the broken event fails again, with a new error ID.
      const again = await openSse(`/v1/executions/${id}/events`, { 'last-event-id': '1' });
      expect(await expectFaultFrame(again, [])).not.toBe(errorId);
    });

    it('[ERR-03] a broken event already stored is sent after the frames before it, as one error event', async () => {
      const id = await submit('e2e.events.ticks', { k: 3 });
      await eventExists(id, 1);
      await engine.signal(id, 'go');
      await eventExists(id, 2);
      await db.query(`UPDATE execution_events SET data = 'garbage'::bytea WHERE execution_id = $1 AND seq = $2`, [id, 2]);
      const stream = await openSse(`/v1/executions/${id}/events?after=0`);
      expect(stream.status).toBe(200);
      expectEventFrame(await stream.next(), 1, 'probe.tick');
      await expectFaultFrame(stream, [1]);
      await engine.signal(id, 'go');
      for await (const event of engine.observe(id, 2)) if (event.type === 'execution.ended') break;
    });
  });
});

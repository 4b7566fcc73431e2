import type { ExecutionEvent, Json, Queryable, Workflow } from '@openbot/engine';
import { observeEvents } from '../../../libs/engine/src/logs/event-log';
import type { EngineContext } from '../../../libs/engine/src/run/context';
import { appendEvents } from '../../../libs/engine/src/sql/events';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { eventually, onePhase, SERVICE, waitForState } from './helpers';

interface StreamState {
  [key: string]: Json;
  done: boolean;
  streamed: boolean;
  wait: boolean;
}

const DELTAS = 120;

/**
 * One phase streams deltas (a model reply, one every 4 ms, written in windows), then waits for
 * `finish` when the input asks (so a reader can sit caught up on a live execution).
 */
const streamer: Workflow<StreamState, { wait: boolean }> = {
  name: 'test.handover-stream',
  initial: ({ wait }) => ({ done: false, streamed: false, wait }),
  next: (s) => (s.done ? { end: 'completed', result: null } : { phase: 'stream' }),
  phases: {
    stream: {
      async run(ctx) {
        if (ctx.state.streamed) return { state: { ...ctx.state, done: true } };
        for (let i = 0; i < DELTAS; i++) {
          ctx.publisher.publish('text.delta', { text: `t${i} ` }, { step: 1, attempt: 1 });
          await new Promise((r) => setTimeout(r, 4));
        }
        await ctx.publisher.flush();
        return ctx.state.wait ? { state: { ...ctx.state, streamed: true }, wait: { signals: ['finish'] } } : { state: { ...ctx.state, done: true } };
      },
    },
  },
};

/** Streams a little, commits a result with an event in the call's transaction, then ends with an event of its own end. */
const committer: Workflow<StreamState, null> = {
  name: 'test.handover-committed',
  initial: () => ({ done: false, streamed: false, wait: false }),
  next: (s) => (s.done ? { end: 'completed', result: null } : { phase: 'answer' }),
  phases: {
    answer: {
      async run(ctx) {
        for (let i = 0; i < 5; i++) {
          ctx.publisher.publish('text.delta', { text: `t${i} ` }, { step: 1, attempt: 1 });
          await new Promise((r) => setTimeout(r, 4));
        }
        await ctx.publisher.flush();
        await ctx.calls.call('answer', { safe: true, commit: (tx) => ctx.publisher.publishIn(tx, [{ type: 'test.committed', payload: { n: 1 }, step: 1, attempt: 1 }]).then(() => undefined) }, () =>
          Promise.resolve('ok'),
        );
        ctx.publisher.announce();
        return { state: { ...ctx.state, done: true } };
      },
    },
  },
  end: ({ emit }) => {
    emit('test.end-work', { k: 'v' });
    return Promise.resolve();
  },
};

/** One quiet phase, then the one-statement end (no end work, no parent, no waiter). */
const quiet = onePhase('test.handover-quiet', 'pause', () => new Promise((r) => setTimeout(r, 300)));

/**
 * Readers on the node that runs a phase get its events handed over in memory (EVT-02): they read
 * the table only where the buffer cannot vouch for what is there, and the fallback poll still
 * reads it, so a wake-up lost on any path costs latency, never an event.
 */
describe('engine: events handed over to readers on the owner node', () => {
  let t: TestEngine;
  let ctx: EngineContext;

  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(streamer);
    t.engine.register(committer);
    t.engine.register(quiet);
    await t.engine.start();
    // The engine's own listener, seal and pool: the reader below is the one `observe` runs, with its reads counted.
    ctx = (t.engine as unknown as { ctx: EngineContext }).ctx;
  });

  afterAll(async () => {
    await t.close();
  });

  function countingReader(executionId: string, signal?: AbortSignal): { events: AsyncGenerator<ExecutionEvent>; reads: () => number } {
    let reads = 0;
    const db: Queryable = {
      query: ((config: { name?: string }, values?: unknown[]) => {
        if (config.name === 'engine.read_events') reads++;
        return (ctx.pool.query as (c: unknown, v?: unknown[]) => unknown)(config, values);
      }) as Queryable['query'],
    };
    return { events: observeEvents({ db, sealed: ctx.sealed, listener: ctx.listener }, executionId, 0, signal), reads: () => reads };
  }

  it('[EVT-02] a reader following a streamed phase on its owner node gets every delta in order while reading the table far less often than the phase wrote', async () => {
    const { executionId } = await t.engine.submit({ workflow: streamer.name, input: { wait: false }, scope: SERVICE });
    const reader = countingReader(executionId);
    const events: ExecutionEvent[] = [];
    for await (const event of reader.events) events.push(event);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === 'text.delta').map((e) => e.text)).toEqual(Array.from({ length: DELTAS }, (_, i) => `t${i} `));
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    const [{ writes }] = (await t.database.query<{ writes: number }>(
      `SELECT count(DISTINCT at)::int AS writes FROM execution_events WHERE execution_id = $1 AND type = 'text.delta'`,
      [executionId],
    )) as [{ writes: number }];
    // Re-reading after every handed-over window would cost at least one read per write.
    expect(writes).toBeGreaterThanOrEqual(4);
    expect(reader.reads()).toBeLessThan(writes / 2);
  });

  it('[EVT-02] events committed in a transaction (a call result, the end) reach a reader on the owner node from memory too: it reads the table only to start', async () => {
    const { executionId } = await t.engine.submit({ workflow: committer.name, input: null, scope: SERVICE });
    const reader = countingReader(executionId);
    const events: ExecutionEvent[] = [];
    for await (const event of reader.events) events.push(event);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.slice(-3).map((e) => [e.type, e.n ?? e.k ?? e.state])).toEqual([
      ['test.committed', 1],
      ['test.end-work', 'v'],
      ['execution.ended', 'completed'],
    ]);
    // The same events as the table holds (an in-memory copy must never differ from what a later reader reads).
    const again: ExecutionEvent[] = [];
    for await (const event of t.engine.observe(executionId, 0, undefined, false)) again.push(event);
    expect(events).toEqual(again);
    // Handed over after their commits; waking the reader to read them back would cost a read per commit.
    expect(reader.reads()).toBeLessThanOrEqual(2);
  });

  it('[EVT-02] the one-statement end reaches a reader on the node that created the execution from memory: no read to start, none for the end (decision 061)', async () => {
    const { executionId } = await t.engine.submit({ workflow: quiet.name, input: null, scope: SERVICE });
    const reader = countingReader(executionId);
    const events: ExecutionEvent[] = [];
    for await (const event of reader.events) events.push(event);
    expect(events).toEqual([expect.objectContaining({ seq: 1, type: 'execution.ended', state: 'completed' })]);
    const again: ExecutionEvent[] = [];
    for await (const event of t.engine.observe(executionId, 0, undefined, false)) again.push(event);
    expect(events).toEqual(again);
    expect(reader.reads()).toBe(0);
  });

  it('[EVT-02] a reader caught up from memory still finds an event committed with no wake-up at all: the fallback poll reads the table', async () => {
    const { executionId } = await t.engine.submit({ workflow: streamer.name, input: { wait: true }, scope: SERVICE });
    const abort = new AbortController();
    const reader = countingReader(executionId, abort.signal);
    const events: ExecutionEvent[] = [];
    const reading = (async () => {
      for await (const event of reader.events) events.push(event);
    })();
    await waitForState(t.engine, executionId, ['waiting']);
    await eventually(() => events.length === DELTAS, 'the reader to catch up with the stream');
    // Appended straight into the log: no NOTIFY, no wake-up, nothing handed over.
    await appendEvents(ctx.pool, executionId, [{ type: 'test.silent', step: null, attempt: null, keyId: null, data: null }]);
    await eventually(() => events.some((e) => e.type === 'test.silent'), 'the silent event to reach the reader', 20_000);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    abort.abort();
    await reading;
    expect(await t.engine.signal(executionId, 'finish', null)).toBe(true);
    await waitForState(t.engine, executionId, ['completed']);
  });

  it('[EVT-02] a one-time read on the node that created the execution reads the table: another node\'s events may be committed with their NOTIFY still on its way (decision 061)', async () => {
    const { executionId } = await t.engine.submit({ workflow: streamer.name, input: { wait: true }, scope: SERVICE });
    await waitForState(t.engine, executionId, ['waiting']);
    // As another node's commit whose wake-up has not arrived: in the log, nothing handed over here.
    await appendEvents(ctx.pool, executionId, [{ type: 'test.elsewhere', step: null, attempt: null, keyId: null, data: null }]);
    const once: ExecutionEvent[] = [];
    for await (const event of t.engine.observe(executionId, 0, undefined, false)) once.push(event);
    expect(once.at(-1)).toMatchObject({ type: 'test.elsewhere', seq: once.length });
    expect(await t.engine.signal(executionId, 'finish', null)).toBe(true);
    await waitForState(t.engine, executionId, ['completed']);
  });
});

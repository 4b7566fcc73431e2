import type { ExecutionEvent } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { onePhase, SERVICE, waitForState } from './helpers';

const DELTAS = 120;

/** Announces a call, then loses the answer of an unsafe write inside the same window. */
const announcedThenLost = onePhase('test.window-announced-then-lost', 'call', async (ctx) => {
  ctx.publisher.publish('test.first', null);
  // Inside the window: held in memory when the call's answer is lost right after.
  ctx.publisher.publish('tool.called', { callId: 'c1' });
  await ctx.calls.call('pay', { safe: false }, () => {
    throw Object.assign(new Error('the connection broke after the request was written'), { resultLost: true });
  });
});

/** One phase that publishes a token stream while it runs (a model reply), one delta every 4 ms. */
const streamer = onePhase('test.window-stream', 'stream', async (ctx) => {
  for (let i = 0; i < DELTAS; i++) {
    ctx.publisher.publish('text.delta', { text: `t${i} ` }, { step: 1, attempt: 1 });
    await new Promise((r) => setTimeout(r, 4));
  }
  await ctx.publisher.flush();
});

/** Released by the test once it saw the first token stored. */
let releaseText: () => void = () => undefined;

/**
 * Joinable text under a long window (the engine of this test ticks every 10 s): the first token
 * of an attempt must be stored while the phase still runs, later tokens join while they wait.
 */
const heldText = onePhase('test.window-held-text', 'stream', async (ctx) => {
  ctx.publisher.publish('model.started', null, { step: 1, attempt: 1 });
  await ctx.publisher.flush();
  // A write just happened: without the first-token rule this would wait for the next tick.
  const released = new Promise<void>((resolve) => (releaseText = resolve));
  ctx.publisher.publishText('text.delta', 'a', { step: 1, attempt: 1 });
  await released;
  ctx.publisher.publishText('text.delta', 'b', { step: 1, attempt: 1 });
  ctx.publisher.publishText('text.delta', 'c', { step: 1, attempt: 1 });
  ctx.publisher.publish('tool.progress', { n: 1 });
  ctx.publisher.publishText('text.delta', 'd', { step: 1, attempt: 1 });
  ctx.publisher.publishText('text.delta', 'x', { step: 1, attempt: 2 });
  ctx.publisher.publishText('text.delta', 'y', { step: 1, attempt: 2 });
  await ctx.publisher.flush();
});

/** A first token and the next one published in the same turn of the event loop, with no write in flight. */
const sameTickText = onePhase('test.window-same-tick-text', 'stream', async (ctx) => {
  ctx.publisher.publish('model.started', null, { step: 1, attempt: 1 });
  await ctx.publisher.flush();
  ctx.publisher.publishText('text.delta', 'first', { step: 1, attempt: 1 });
  ctx.publisher.publishText('text.delta', ' second', { step: 1, attempt: 1 });
  await ctx.publisher.flush();
});

describe('engine: events written in windows while a phase runs', () => {
  let t: TestEngine;

  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(streamer);
    t.engine.register(announcedThenLost);
    await t.engine.start();
  });

  afterAll(async () => {
    await t.close();
  });

  it('[EVT-01] a stream of 120 deltas over about half a second is stored in a few writes (one per window, not one per delta), complete, in order and gapless', async () => {
    const { executionId } = await t.engine.submit({ workflow: streamer.name, input: null, scope: SERVICE });
    await waitForState(t.engine, executionId, ['completed']);

    const events: ExecutionEvent[] = [];
    for await (const event of t.engine.observe(executionId, 0, undefined, false)) events.push(event);
    const deltas = events.filter((e) => e.type === 'text.delta');
    expect(deltas.map((e) => e.text)).toEqual(Array.from({ length: DELTAS }, (_, i) => `t${i} `));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));

    // Rows written by one statement share its transaction's now(): each distinct time is one write.
    const [{ writes }] = (await t.database.query<{ writes: number }>(
      `SELECT count(DISTINCT at)::int AS writes FROM execution_events WHERE execution_id = $1 AND type = 'text.delta'`,
      [executionId],
    )) as [{ writes: number }];
    // Without windows every delta (4 ms apart, each write taking well under that) is a write of its own.
    expect(writes).toBeLessThanOrEqual(DELTAS / 4);
    expect(writes).toBeGreaterThanOrEqual(2);
  });

  it('[EVT-01] events a failed attempt published are stored before its stop: tool.called comes before the execution.outcome_unknown that follows it', async () => {
    const { executionId } = await t.engine.submit({ workflow: announcedThenLost.name, input: null, scope: SERVICE });
    await waitForState(t.engine, executionId, ['outcome_unknown']);

    const events: ExecutionEvent[] = [];
    for await (const event of t.engine.observe(executionId, 0, undefined, false)) events.push(event);
    expect(events.map((e) => e.type)).toEqual(['test.first', 'tool.called', 'execution.outcome_unknown']);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  });

  it('[EVT-01] the running phases of one tick lane write at the same publish tick, in one statement', async () => {
    const ids = await Promise.all(Array.from({ length: 16 }, () => t.engine.submit({ workflow: streamer.name, input: null, scope: SERVICE }).then((s) => s.executionId)));
    for (const id of ids) await waitForState(t.engine, id, ['completed']);
    // Rows of one statement share its transaction's now(): count the distinct write times of all sixteen.
    const [row] = (await t.database.query<{ writes: number; per_execution: number }>(
      `SELECT count(DISTINCT at)::int AS writes, (count(DISTINCT (execution_id, at))::float / 16) AS per_execution
         FROM execution_events WHERE execution_id = ANY($1::uuid[]) AND type = 'text.delta'`,
      [ids],
    )) as [{ writes: number; per_execution: number }];
    // Each execution writes at every tick of its lane it has events for. The sixteen share at most
    // TICK_LANES (4) lanes, so together they need far fewer statements than their writes added up.
    expect(row.writes).toBeLessThan(row.per_execution * 16 * 0.5);
  });
});

describe('engine: joinable text events', () => {
  let t: TestEngine;

  beforeAll(async () => {
    t = await startTestEngine({ eventWindowMs: 10_000 });
    t.engine.register(heldText);
    t.engine.register(sameTickText);
    await t.engine.start();
  });

  afterAll(async () => {
    await t.close();
  });

  it('[EVT-01] the first token of an attempt is stored at once; tokens that wait for one write join one event, never across another event or attempt', async () => {
    const { executionId } = await t.engine.submit({ workflow: heldText.name, input: null, scope: SERVICE });
    // The phase waits for the test: 'a' is stored long before the 10 s tick.
    for (let found = false; !found; await new Promise((r) => setTimeout(r, 10))) {
      const rows = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM execution_events WHERE execution_id = $1 AND type = 'text.delta'`, [executionId]);
      found = (rows[0] as { n: number }).n === 1;
    }
    releaseText();
    await waitForState(t.engine, executionId, ['completed']);

    const events: ExecutionEvent[] = [];
    for await (const event of t.engine.observe(executionId, 0, undefined, false)) events.push(event);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type !== 'execution.ended').map((e) => [e.type, e.attempt ?? null, e.text ?? null])).toEqual([
      ['model.started', 1, null],
      ['text.delta', 1, 'a'],
      ['text.delta', 1, 'bc'],
      ['tool.progress', null, null],
      ['text.delta', 1, 'd'],
      ['text.delta', 2, 'xy'],
    ]);
  });

  it('[EVT-01] a first token is taken alone by the write it starts: a token published right after it, in the same turn of the event loop, goes in the next event', async () => {
    const { executionId } = await t.engine.submit({ workflow: sameTickText.name, input: null, scope: SERVICE });
    await waitForState(t.engine, executionId, ['completed']);
    const texts: string[] = [];
    for await (const event of t.engine.observe(executionId, 0, undefined, false)) if (event.type === 'text.delta') texts.push(event.text as string);
    expect(texts).toEqual(['first', ' second']);
  });
});

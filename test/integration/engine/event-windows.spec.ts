import type { ExecutionEvent, Json, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { SERVICE, waitForState } from './helpers';

interface StreamState {
  [key: string]: Json;
  done: boolean;
}

const DELTAS = 120;

/** Announces a call, then loses the answer of an unsafe write inside the same window. */
const announcedThenLost: Workflow<StreamState, null> = {
  name: 'test.window-announced-then-lost',
  initial: () => ({ done: false }),
  next: (s) => (s.done ? { end: 'completed', result: null } : { phase: 'call' }),
  phases: {
    call: {
      async run(ctx) {
        ctx.publisher.publish('test.first', null);
        // Inside the window: held in memory when the call's answer is lost right after.
        ctx.publisher.publish('tool.called', { callId: 'c1' });
        await ctx.calls.call('pay', { safe: false }, () => {
          throw Object.assign(new Error('the connection broke after the request was written'), { resultLost: true });
        });
        return { state: { done: true } };
      },
    },
  },
};

/** One phase that publishes a token stream while it runs (a model reply), one delta every 4 ms. */
const streamer: Workflow<StreamState, null> = {
  name: 'test.window-stream',
  initial: () => ({ done: false }),
  next: (s) => (s.done ? { end: 'completed', result: null } : { phase: 'stream' }),
  phases: {
    stream: {
      async run(ctx) {
        for (let i = 0; i < DELTAS; i++) {
          ctx.publisher.publish('text.delta', { text: `t${i} ` }, { step: 1, attempt: 1 });
          await new Promise((r) => setTimeout(r, 4));
        }
        await ctx.publisher.flush();
        return { state: { done: true } };
      },
    },
  },
};

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
});

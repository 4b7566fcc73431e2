import type { Engine, Json, Wake, Workflow } from '@openbot/engine';
import type { EngineNode } from '@openbot/engine/node';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { eventually, executionRow, SERVICE, waitForState } from './helpers';

interface WaitPlan {
  [key: string]: Json;
  signals: string[];
  /** A durable timer this many ms after the phase ends (null: none). */
  untilMs: number | null;
  /** A signal the phase sends (through node `via`) before it returns its wait: saved before the waiting state. */
  self: { name: string; payload: Json; via: 'A' | 'B' } | null;
}

interface WaiterState {
  [key: string]: Json;
  i: number;
  plans: WaitPlan[];
  log: Json[];
  done: boolean;
}

function summarize(wake: Wake | null): Json {
  return wake === null ? null : { signals: wake.signals.map((s) => ({ name: s.name, payload: s.payload })), timer: wake.timer };
}

/** Waits once per plan, recording why it woke each time; ends with that record as its result. */
function waiterWorkflow(node: (name: 'A' | 'B') => Engine): Workflow<WaiterState, { plans: WaitPlan[] }> {
  return {
    name: 'test.waiter',
    initial: ({ plans }) => ({ i: 0, plans, log: [], done: false }),
    next: (s) => (s.done ? { end: 'completed', result: s.log } : { phase: 'round' }),
    phases: {
      round: {
        async run(ctx) {
          const s = ctx.state;
          const log = s.i > 0 ? [...s.log, summarize(ctx.wake)] : s.log;
          if (s.i === s.plans.length) return { state: { ...s, log, done: true } };
          const plan = s.plans[s.i]!;
          if (plan.self) expect(await node(plan.self.via).signal(ctx.executionId, plan.self.name, plan.self.payload)).toBe(true);
          return {
            state: { ...s, i: s.i + 1, log },
            wait: { signals: plan.signals, ...(plan.untilMs !== null ? { until: new Date(Date.now() + plan.untilMs) } : {}) },
          };
        },
      },
    },
  };
}

const plan = (p: Partial<WaitPlan>): WaitPlan => ({ signals: [], untilMs: null, self: null, ...p });

describe('engine: signals and durable timers', () => {
  let t: TestEngine;
  let b: EngineNode;

  beforeAll(async () => {
    t = await startTestEngine();
    const nodeB = await t.node('node-b');
    b = nodeB.engine;
    const node = (name: 'A' | 'B') => (name === 'A' ? t.engine : b);
    t.engine.register(waiterWorkflow(node));
    b.register(waiterWorkflow(node));
    await t.engine.start();
    await b.start();
  });
  afterAll(async () => {
    await t.close();
  });

  const submit = (plans: WaitPlan[]) => t.engine.submit({ workflow: 'test.waiter', input: { plans }, scope: SERVICE });
  const waitingAtStep = (id: string, step: number) =>
    eventually(async () => {
      const row = await executionRow(t.database, id);
      return row.state === 'waiting' && row.step === step ? row : null;
    }, `${id} to wait after step ${step}`);
  const ended = (id: string) => waitForState(t.engine, id, ['completed', 'failed', 'cancelled', 'interrupted']);

  it('[EXE-12] no lost wake-up: a signal saved before the waiter saved its waiting state still wakes it', async () => {
    const { executionId } = await submit([plan({ signals: ['go'], self: { name: 'go', payload: { early: true }, via: 'A' } })]);
    expect(await ended(executionId)).toMatchObject({ state: 'completed' });
    expect(await t.engine.result(executionId)).toEqual([{ signals: [{ name: 'go', payload: { early: true } }], timer: false }]);
    // The signal was consumed by that wait, exactly once.
    const signals = await t.database.query<{ consumed: boolean }>(`SELECT consumed_at IS NOT NULL AS consumed FROM execution_signals WHERE execution_id = $1`, [executionId]);
    expect(signals).toEqual([{ consumed: true }]);
  });

  it('[EXE-12] a signal sent from another node before the wait is saved also wakes it; other signal names do not', async () => {
    // The phase (on node A) has node B send the signal: another node, another pool, same rule.
    const early = await submit([plan({ signals: ['go'], self: { name: 'go', payload: { from: 'B' }, via: 'B' } })]);
    expect(await ended(early.executionId)).toMatchObject({ state: 'completed' });
    expect(await t.engine.result(early.executionId)).toEqual([{ signals: [{ name: 'go', payload: { from: 'B' } }], timer: false }]);

    // A signal of another name saved early does not satisfy the wait; the right one later does.
    const other = await submit([plan({ signals: ['go'], self: { name: 'other', payload: 1, via: 'B' } })]);
    await waitForState(t.engine, other.executionId, ['waiting']);
    expect(await b.signal(other.executionId, 'go', 2)).toBe(true);
    expect(await ended(other.executionId)).toMatchObject({ state: 'completed' });
    expect(await t.engine.result(other.executionId)).toEqual([{ signals: [{ name: 'go', payload: 2 }], timer: false }]);
  });

  it('[EXE-12] a signal to a waiting execution wakes it and delivers its payload; each signal is consumed once', async () => {
    const { executionId } = await submit([plan({ signals: ['go'] }), plan({ signals: ['go'] })]);
    await waitForState(t.engine, executionId, ['waiting']);
    expect(await t.engine.signal(executionId, 'go', { n: 1, text: 'first' })).toBe(true);
    // The second wait needs a second signal: the first one is not delivered twice.
    await waitingAtStep(executionId, 2);
    expect(await b.signal(executionId, 'go', { n: 2 })).toBe(true);
    expect(await ended(executionId)).toMatchObject({ state: 'completed' });
    expect(await t.engine.result(executionId)).toEqual([
      { signals: [{ name: 'go', payload: { n: 1, text: 'first' } }], timer: false },
      { signals: [{ name: 'go', payload: { n: 2 } }], timer: false },
    ]);
    // A signal to a final execution is refused and stored nowhere.
    expect(await t.engine.signal(executionId, 'go', null)).toBe(false);
    const [{ n }] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM execution_signals WHERE execution_id = $1', [executionId]);
    expect(n).toBe(2);
  });

  it('[EXE-12] a durable timer wakes a waiting execution without any signal', async () => {
    const { executionId } = await submit([plan({ untilMs: 1_500 })]);
    await waitForState(t.engine, executionId, ['waiting']);
    const timers = await t.database.query<{ fired: boolean }>('SELECT fired_at IS NOT NULL AS fired FROM execution_timers WHERE execution_id = $1', [executionId]);
    expect(timers).toEqual([{ fired: false }]);
    expect(await ended(executionId)).toMatchObject({ state: 'completed' });
    expect(await t.engine.result(executionId)).toEqual([{ signals: [], timer: true }]);
    const fired = await t.database.query<{ fired: boolean; on_time: boolean }>(
      'SELECT fired_at IS NOT NULL AS fired, fired_at >= due_at AS on_time FROM execution_timers WHERE execution_id = $1',
      [executionId],
    );
    expect(fired).toEqual([{ fired: true, on_time: true }]);
  });

  it('[EXE-12] a wait for a signal or a timer wakes on whichever comes first', async () => {
    const bySignal = await submit([plan({ signals: ['go'], untilMs: 600_000 })]);
    const byTimer = await submit([plan({ signals: ['go'], untilMs: 1_000 })]);
    await waitForState(t.engine, bySignal.executionId, ['waiting']);
    expect(await t.engine.signal(bySignal.executionId, 'go', 'now')).toBe(true);
    expect(await ended(bySignal.executionId)).toMatchObject({ state: 'completed' });
    expect(await t.engine.result(bySignal.executionId)).toEqual([{ signals: [{ name: 'go', payload: 'now' }], timer: false }]);
    expect(await ended(byTimer.executionId)).toMatchObject({ state: 'completed' });
    expect(await t.engine.result(byTimer.executionId)).toEqual([{ signals: [], timer: true }]);
  });

  it('[EXE-12] the timer of a wait that a signal ended is retired: it does not wake a later wait', async () => {
    const { executionId } = await submit([plan({ signals: ['go'], untilMs: 1_000 }), plan({ signals: ['again'] })]);
    await waitingAtStep(executionId, 1);
    expect(await t.engine.signal(executionId, 'go', null)).toBe(true);
    const waiting = await waitingAtStep(executionId, 2);
    const timers = await t.database.query<{ retired: boolean }>('SELECT fired_at IS NOT NULL AS retired FROM execution_timers WHERE execution_id = $1', [executionId]);
    expect(timers).toEqual([{ retired: true }]);
    // Let every job of this execution run out, the old timer's job included.
    await eventually(async () => {
      const jobs = await t.database.query<{ state: string; after_due: boolean }>(
        `SELECT state, start_after >= (SELECT due_at FROM execution_timers WHERE execution_id = $1::uuid) AS after_due
           FROM pgboss.job WHERE name = 'execution-advance' AND data->>'executionId' = $1::text`,
        [executionId],
      );
      return jobs.some((j) => j.after_due && j.state === 'completed') && jobs.every((j) => j.state === 'completed');
    }, 'the old timer job to run');
    const after = await executionRow(t.database, executionId);
    expect(after).toMatchObject({ state: 'waiting', step: 2, generation: waiting.generation });
    expect(await t.engine.signal(executionId, 'again', 2)).toBe(true);
    expect(await ended(executionId)).toMatchObject({ state: 'completed' });
    expect(await t.engine.result(executionId)).toEqual([
      { signals: [{ name: 'go', payload: null }], timer: false },
      { signals: [{ name: 'again', payload: 2 }], timer: false },
    ]);
  });

  it('[EXE-12] a durable timer outlives the node that set it', async () => {
    const c = await t.node('node-c');
    c.engine.register(waiterWorkflow(() => c.engine));
    await c.engine.start();
    const { executionId } = await c.engine.submit({ workflow: 'test.waiter', input: { plans: [plan({ untilMs: 2_000 })] }, scope: SERVICE });
    await waitForState(c.engine, executionId, ['waiting']);
    await c.engine.stop();
    expect(await ended(executionId)).toMatchObject({ state: 'completed' });
    expect(await t.engine.result(executionId)).toEqual([{ signals: [], timer: true }]);
  });
});

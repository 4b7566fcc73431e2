import type { Engine, Json, Wake, Workflow } from '@openbot/engine';
import type { EngineNode } from '@openbot/engine/node';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, eventually, executionRow, forceTakeover, localRuns, SERVICE, waitForState, type Deferred } from './helpers';

/**
 * Waiting for another execution's end (not a child's) and commands to other executions in a
 * phase's or an end's transaction (STC-01). Two engines share one database.
 */

interface HeldState {
  [key: string]: Json;
  done: boolean;
}

/** Waits for a `finish` signal (its payload picks the outcome), then ends; no end work (the one-statement end). */
const held: Workflow<HeldState, Json> = {
  name: 'test.held',
  initial: () => ({ done: false }),
  next: (s, wake) => {
    if (!s.done) return { phase: 'hold' };
    const how = wake?.signals[0]?.payload;
    return how === 'fail' ? { end: 'failed', cause: new Error('told to fail') } : { end: 'completed', result: 'held done' };
  },
  phases: {
    hold: { run: async () => ({ state: { done: true }, wait: { signals: ['finish'] } }) },
  },
};

interface WaiterState {
  [key: string]: Json;
  targets: string[];
  /** A signal the phase sends to each target right before it returns its wait (their ends race the waiting state). */
  finishFirst: boolean;
  waited: boolean;
  wake: Json;
}

function summarize(wake: Wake | null): Json {
  return wake === null ? null : { executions: (wake.executions ?? []).map((e) => ({ executionId: e.executionId, state: e.state })), signals: wake.signals.length, timer: wake.timer };
}

/** Waits for the end of `targets`, then records why it woke (its result). */
function waiterWorkflow(engine: () => Engine): Workflow<WaiterState, { targets: string[]; finishFirst?: boolean }> {
  return {
    name: 'test.await',
    initial: (input) => ({ targets: input.targets, finishFirst: input.finishFirst ?? false, waited: false, wake: null }),
    next: (s, wake) => (!s.waited ? { phase: 'await' } : wake !== null ? { phase: 'record' } : { end: 'completed', result: s.wake }),
    phases: {
      await: {
        async run(ctx) {
          if (ctx.state.finishFirst) for (const id of ctx.state.targets) await engine().signal(id, 'finish');
          return { state: { ...ctx.state, waited: true }, wait: { executions: ctx.state.targets } };
        },
      },
      record: { run: async (ctx) => ({ state: { ...ctx.state, wake: summarize(ctx.wake) } }) },
    },
  };
}

interface CommanderState {
  [key: string]: Json;
  signalTo: string;
  cancel: string;
  submitted: string | null;
  done: boolean;
}

describe('engine: waiting for another execution and commands to others', () => {
  let t: TestEngine;
  let b: EngineNode;
  /** Holds the first run of a commander before its checkpoint (later runs go on). */
  let holdFirst: Deferred | null = null;
  const entered: Array<{ id: string; generation: number }> = [];

  const commander = (): Workflow<CommanderState, { signalTo: string; cancel: string }> => ({
    name: 'test.commander',
    initial: (input) => ({ signalTo: input.signalTo, cancel: input.cancel, submitted: null, done: false }),
    next: (s) => (s.done ? { end: 'completed', result: s.submitted } : { phase: 'command' }),
    phases: {
      command: {
        async run(ctx) {
          ctx.commands.signal(ctx.state.signalTo, 'finish', 'ok');
          ctx.commands.cancel(ctx.state.cancel);
          const submitted = ctx.commands.submit({ workflow: 'test.held', input: null, scope: SERVICE });
          entered.push({ id: ctx.executionId, generation: ctx.generation });
          // Held before the checkpoint: nothing may have happened to the others yet.
          if (ctx.generation === 1) await holdFirst?.promise;
          return { state: { ...ctx.state, submitted, done: true } };
        },
      },
    },
    async end(ctx) {
      // An end's own commands commit with it (STC-01).
      if (ctx.outcome === 'completed' && ctx.state.submitted !== null) await ctx.signal(ctx.state.submitted, 'finish', 'from the end');
    },
  });

  beforeAll(async () => {
    t = await startTestEngine();
    const nodeB = await t.node('node-b');
    b = nodeB.engine;
    for (const engine of [t.engine, b]) {
      engine.register(held);
      engine.register(waiterWorkflow(() => t.engine));
      engine.register(commander());
    }
    await t.engine.start();
    await b.start();
  });
  afterAll(async () => {
    await t.close();
  });

  const submitHeld = async () => (await t.engine.submit({ workflow: 'test.held', input: null, scope: SERVICE })).executionId;
  const waitingAt = (id: string) => waitForState(t.engine, id, ['waiting']);
  const ended = (id: string) => waitForState(t.engine, id, ['completed', 'failed', 'cancelled', 'interrupted']);
  const heldIds = async () => (await t.database.query<{ id: string }>(`SELECT id FROM executions WHERE workflow = 'test.held' ORDER BY id`)).map((r) => r.id);
  const timers = async (id: string) => Number((await t.database.query<{ n: string }>('SELECT count(*) AS n FROM execution_timers WHERE execution_id = $1', [id]))[0]!.n);

  it('[EXE-14] a wait for other executions wakes when the last of them ends, in that end\'s transaction, with their final states and no timer', async () => {
    const [one, two] = [await submitHeld(), await submitHeld()];
    await Promise.all([waitingAt(one), waitingAt(two)]);
    const { executionId: waiter } = await t.engine.submit({ workflow: 'test.await', input: { targets: [one, two] }, scope: SERVICE });
    await waitingAt(waiter);

    expect(await b.signal(one, 'finish', 'ok')).toBe(true);
    await ended(one);
    // One of two ended: woken by that end, it saw the other still open and waits again.
    await eventually(async () => (await executionRow(t.database, waiter)).state === 'waiting' && (await t.database.query('SELECT 1 FROM execution_awaits WHERE waiter_id = $1', [waiter])).length === 1, 'the waiter to wait for the second only');

    expect(await b.signal(two, 'finish', 'fail')).toBe(true);
    expect(await ended(waiter)).toMatchObject({ state: 'completed' });
    expect(await t.engine.result(waiter)).toEqual({
      executions: [
        { executionId: one, state: 'completed' },
        { executionId: two, state: 'failed' },
      ],
      signals: 0,
      timer: false,
    });
    // No polling: no durable timer was ever set, and no await row is left behind.
    expect(await timers(waiter)).toBe(0);
    expect(await t.database.query('SELECT 1 FROM execution_awaits WHERE waiter_id = $1', [waiter])).toEqual([]);
  });

  it('[EXE-14] an execution that already ended satisfies the wait at once', async () => {
    const done = await submitHeld();
    await waitingAt(done);
    await t.engine.signal(done, 'finish');
    await ended(done);
    const { executionId: waiter } = await t.engine.submit({ workflow: 'test.await', input: { targets: [done] }, scope: SERVICE });
    expect(await ended(waiter)).toMatchObject({ state: 'completed' });
    expect(await t.engine.result(waiter)).toMatchObject({ executions: [{ executionId: done, state: 'completed' }] });
  });

  it('[EXE-12][EXE-14] no lost wake-up: ends that commit while the waiter saves its waiting state still wake it (20 races)', async () => {
    const waiters: string[] = [];
    for (let i = 0; i < 20; i++) {
      const targets = [await submitHeld(), await submitHeld()];
      await Promise.all(targets.map(waitingAt));
      // The waiter's phase signals both right before returning its wait: their ends race its waiting state.
      waiters.push((await t.engine.submit({ workflow: 'test.await', input: { targets, finishFirst: true }, scope: SERVICE })).executionId);
    }
    for (const waiter of waiters) expect(await ended(waiter)).toMatchObject({ state: 'completed' });
  });

  it('[STC-01] a phase signals, cancels and submits other executions in its checkpoint transaction: nothing before it commits, once after a takeover', async () => {
    const signalled = await submitHeld();
    const victim = await submitHeld();
    await Promise.all([waitingAt(signalled), waitingAt(victim)]);
    const heldBefore = await heldIds();
    holdFirst = deferred();
    const { executionId } = await t.engine.submit({ workflow: 'test.commander', input: { signalTo: signalled, cancel: victim }, scope: SERVICE });
    await eventually(() => entered.some((e) => e.id === executionId && e.generation === 1), 'the first run to issue its commands');

    // The first owner issued its commands but has not checkpointed: none of them happened.
    expect((await t.engine.get(signalled))?.state).toBe('waiting');
    expect((await t.engine.get(victim))?.state).toBe('waiting');
    expect(await heldIds()).toEqual(heldBefore);

    // The owner is lost before its checkpoint: node B runs the phase again and commits its commands once.
    await forceTakeover(t.database, b, executionId, 1);
    expect(await ended(executionId)).toMatchObject({ state: 'completed' });
    holdFirst.resolve();
    // The lost owner goes on to its checkpoint, which is fenced off (EXE-04): none of its commands commit.
    await eventually(() => localRuns(t.engine) === 0, 'the lost owner to stop');

    expect(await ended(signalled)).toMatchObject({ state: 'completed' });
    expect(await ended(victim)).toMatchObject({ state: 'cancelled' });
    const submitted = (await t.engine.result(executionId)) as string;
    // The end signalled the submitted execution in its own transaction.
    expect(await ended(submitted)).toMatchObject({ state: 'completed' });
    const signals = await t.database.query<{ execution_id: string; name: string }>(
      `SELECT execution_id, name FROM execution_signals WHERE execution_id = ANY($1::uuid[]) ORDER BY execution_id, name`,
      [[signalled, victim, submitted]],
    );
    // Exactly one of each: the lost owner's commands never committed.
    expect(signals.filter((s) => s.execution_id === signalled).map((s) => s.name)).toEqual(['finish']);
    expect(signals.filter((s) => s.execution_id === victim).map((s) => s.name)).toEqual(['cancel']);
    expect(signals.filter((s) => s.execution_id === submitted).map((s) => s.name)).toEqual(['finish']);
    expect((await heldIds()).filter((id) => !heldBefore.includes(id))).toEqual([submitted]);
  });
});

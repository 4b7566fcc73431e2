import type { Json, Workflow } from '@openbot/engine';
import type { EngineNode } from '@openbot/engine/node';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, eventually, executionRow, forceTakeover, localRuns, SERVICE, waitForState, type Deferred } from './helpers';

/**
 * Signals that reach a running phase through its inbox (steering input, approval decisions),
 * and pause and resume through its gate (TASK-02). Two engines share one database.
 */

interface SteerInput {
  [key: string]: Json;
  /** After its last read the phase holds, then either waits for `steer` or hands over to a next phase that reads. */
  then: 'wait' | 'read';
}

interface SteerState {
  [key: string]: Json;
  then: 'wait' | 'read';
  read: Json[];
  later: Json[];
  stage: number;
}

interface PauseState {
  [key: string]: Json;
  done: boolean;
}

describe('engine: signals to a running phase, pause and resume', () => {
  let t: TestEngine;
  let b: EngineNode;
  /** Holds a phase after its last inbox read, per execution and generation. */
  let holdAfterRead: Deferred | null = null;
  const lastRead = new Map<string, Deferred>();
  const runs: Array<{ id: string; generation: number; gate: string | null; released: boolean; lateSend: string | null }> = [];
  let finishWork: Deferred = deferred();

  const steer: Workflow<SteerState, SteerInput> = {
    name: 'test.steer',
    initial: (input) => ({ then: input.then, read: [], later: [], stage: 0 }),
    next: (s) => (s.stage === 0 ? { phase: 'listen' } : s.stage === 1 ? { phase: 'after' } : { end: 'completed', result: { read: s.read, later: s.later } }),
    phases: {
      listen: {
        async run(ctx) {
          // Steering input reaches the phase while it runs: no wait, no new phase.
          const read = await ctx.inbox.next(['steer']);
          lastRead.get(ctx.executionId)?.resolve();
          if (ctx.generation === 1) await holdAfterRead?.promise;
          const state = { ...ctx.state, read: read.map((s) => s.payload), stage: 1 };
          return ctx.state.then === 'wait' ? { state, wait: { signals: ['steer'] } } : { state };
        },
      },
      after: {
        async run(ctx) {
          const later = ctx.wake ? ctx.wake.signals.map((s) => s.payload) : (await ctx.inbox.receive(['steer'])).map((s) => s.payload);
          return { state: { ...ctx.state, later, stage: 2 } };
        },
      },
    },
  };

  const pausable: Workflow<PauseState, Json> = {
    name: 'test.pausable',
    initial: () => ({ done: false }),
    next: (s) => (s.done ? { end: 'completed', result: runs.filter((r) => r.gate === null).length } : { phase: 'work' }),
    phases: {
      work: {
        async run(ctx) {
          const run = { id: ctx.executionId, generation: ctx.generation, gate: null as string | null, released: false, lateSend: null as string | null };
          runs.push(run);
          ctx.resources.defer(() => void (run.released = true));
          const aborted = new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
          await Promise.race([aborted, finishWork.promise]);
          if (ctx.signal.aborted) {
            run.gate = String(ctx.signal.reason);
            // A paused phase starts no new send (EXE-11, TASK-02).
            await ctx.calls.call('late', { safe: true }, async () => 'sent').then(
              () => (run.lateSend = 'sent'),
              (error: Error) => (run.lateSend = error.message),
            );
            throw new Error('stopped');
          }
          return { state: { done: true } };
        },
      },
    },
  };

  beforeAll(async () => {
    t = await startTestEngine();
    const nodeB = await t.node('node-b');
    b = nodeB.engine;
    for (const engine of [t.engine, b]) {
      engine.register(steer);
      engine.register(pausable);
    }
    await t.engine.start();
    await b.start();
  });
  afterAll(async () => {
    finishWork.resolve();
    holdAfterRead?.resolve();
    await t.close();
  });

  const ended = (id: string) => waitForState(t.engine, id, ['completed', 'failed', 'cancelled', 'interrupted']);
  const running = (id: string) => waitForState(t.engine, id, ['running']);
  const pending = async (id: string) =>
    (await t.database.query<{ name: string }>('SELECT name FROM execution_signals WHERE execution_id = $1 AND consumed_at IS NULL', [id])).map((r) => r.name);

  it('[EXE-11] a signal reaches the running phase through its inbox (sent from another node), and is consumed with its checkpoint', async () => {
    const { executionId } = await t.engine.submit({ workflow: 'test.steer', input: { then: 'read' }, scope: SERVICE });
    await running(executionId);
    expect(await b.signal(executionId, 'steer', { text: 'shorter, please' })).toBe(true);
    expect(await ended(executionId)).toMatchObject({ state: 'completed' });
    expect(await t.engine.result(executionId)).toEqual({ read: [{ text: 'shorter, please' }], later: [] });
    expect(await pending(executionId)).toEqual([]);
  });

  it.each(['wait', 'read'] as const)(
    '[EXE-11][EXE-12] a signal stored after the phase\'s last read is never dropped (then: %s)',
    async (then) => {
      holdAfterRead = deferred();
      const { executionId } = await t.engine.submit({ workflow: 'test.steer', input: { then }, scope: SERVICE });
      lastRead.set(executionId, deferred());
      await running(executionId);
      await t.engine.signal(executionId, 'steer', 'first');
      await lastRead.get(executionId)!.promise;
      // The phase has read for the last time and is finishing: this one arrives too late for it.
      await t.engine.signal(executionId, 'steer', 'late');
      holdAfterRead.resolve();
      expect(await ended(executionId)).toMatchObject({ state: 'completed' });
      // `wait`: it woke the next decision at once; `read`: the next phase read it. The first is never seen twice.
      expect(await t.engine.result(executionId)).toEqual({ read: ['first'], later: ['late'] });
      expect(await pending(executionId)).toEqual([]);
    },
  );

  it('[EXE-08][EXE-11] a signal read by a phase whose owner is lost before its checkpoint is read again by the new owner', async () => {
    holdAfterRead = deferred();
    const { executionId } = await t.engine.submit({ workflow: 'test.steer', input: { then: 'read' }, scope: SERVICE });
    lastRead.set(executionId, deferred());
    await running(executionId);
    await t.engine.signal(executionId, 'steer', 'approve');
    await lastRead.get(executionId)!.promise;
    // A read is not a consume: the signal stays stored until a checkpoint commits with it.
    expect(await pending(executionId)).toEqual(['steer']);

    await forceTakeover(t.database, b, executionId, 1);
    expect(await ended(executionId)).toMatchObject({ state: 'completed', generation: 2 });
    expect(await t.engine.result(executionId)).toEqual({ read: ['approve'], later: [] });
    holdAfterRead.resolve();
    await eventually(() => localRuns(t.engine) === 0, 'the lost owner to stop');
    const signals = await t.database.query<{ consumed: boolean }>('SELECT consumed_at IS NOT NULL AS consumed FROM execution_signals WHERE execution_id = $1', [executionId]);
    expect(signals).toEqual([{ consumed: true }]);
  });

  it('[TASK-02][EXE-07][EXE-11] a pause closes the running phase\'s gate (no new send), releases its resources and parks it; signals wait; resume continues from the saved state', async () => {
    finishWork = deferred();
    const { executionId } = await t.engine.submit({ workflow: 'test.pausable', input: null, scope: SERVICE });
    await eventually(() => runs.some((r) => r.id === executionId), 'the phase to run');

    expect(await b.pause(executionId)).toEqual({ state: 'running', paused: true });
    const parked = await eventually(async () => {
      const row = await executionRow(t.database, executionId);
      return row.state === 'waiting' && row.paused === true && row.lease_until === null ? row : null;
    }, 'the execution to park');
    expect(parked).toMatchObject({ step: 0, generation: 1 });
    expect(runs.filter((r) => r.id === executionId)).toEqual([{ id: executionId, generation: 1, gate: 'pause', released: true, lateSend: 'phase gate closed (pause)' }]);
    // No call row: the refused send never started.
    expect(await t.database.query('SELECT 1 FROM execution_calls WHERE execution_id = $1', [executionId])).toEqual([]);

    // While paused, a signal is kept and does not run it.
    expect(await t.engine.signal(executionId, 'poke', null)).toBe(true);
    expect((await t.engine.get(executionId))?.paused).toBe(true);
    expect(localRuns(t.engine) + localRuns(b)).toBe(0);
    expect(await executionRow(t.database, executionId)).toMatchObject({ state: 'waiting', generation: 1 });

    finishWork.resolve();
    expect(await t.engine.resume(executionId)).toEqual({ state: 'queued', resumed: true });
    expect(await ended(executionId)).toMatchObject({ state: 'completed', paused: false });
    expect(runs.filter((r) => r.id === executionId).map((r) => [r.generation, r.gate])).toEqual([
      [1, 'pause'],
      [2, null],
    ]);
  });

  it('[TASK-02] a waiting execution paused stays waiting when its signal arrives; resumed, it wakes with that signal', async () => {
    const { executionId } = await t.engine.submit({ workflow: 'test.steer', input: { then: 'wait' }, scope: SERVICE });
    await running(executionId);
    await t.engine.signal(executionId, 'steer', 'first');
    await waitForState(t.engine, executionId, ['waiting']);
    expect(await t.engine.pause(executionId)).toEqual({ state: 'waiting', paused: true });
    await t.engine.signal(executionId, 'steer', 'while paused');
    expect(await executionRow(t.database, executionId)).toMatchObject({ state: 'waiting', paused: true });
    expect(await t.engine.resume(executionId)).toMatchObject({ resumed: true });
    expect(await ended(executionId)).toMatchObject({ state: 'completed' });
    expect(await t.engine.result(executionId)).toEqual({ read: ['first'], later: ['while paused'] });
  });

  it('[TASK-02] pause of an ended execution changes nothing; resume of one not paused says so', async () => {
    const { executionId } = await t.engine.submit({ workflow: 'test.steer', input: { then: 'read' }, scope: SERVICE });
    await t.engine.signal(executionId, 'steer', 'x');
    await ended(executionId);
    expect(await t.engine.pause(executionId)).toEqual({ state: 'completed', paused: false });
    expect(await t.engine.resume(executionId)).toEqual({ state: 'completed', resumed: false });
  });
});

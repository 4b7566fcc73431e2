import type { Json, Wake, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, eventually, executionRow, localRuns, SERVICE, waitForState } from './helpers';

/**
 * A wake-up that comes while the run that just saved its waiting state is still leaving this
 * node: the signal queues the execution and its job, and both claims find the run still here.
 * The run claims it again once it has left; nothing waits for the recovery job, a lease later.
 * (Seen in CI as a paused task resumed right after it parked, then left queued.) One node, and a
 * lease of 60 s: without the claim after leaving, the execution would stay queued past the test.
 */

interface WaitOnce {
  [key: string]: Json;
  waited: boolean;
  got: Json;
}

/** Holds the run in its phase's `after` work, which runs once the wait is saved and before the run leaves. */
let holdAfter: { reached: () => void; leave: Promise<void> } | null = null;

const waitOnce: Workflow<WaitOnce, Record<string, never>> = {
  name: 'test.wait-once',
  initial: () => ({ waited: false, got: null }),
  next: (s) => (s.waited && s.got !== null ? { end: 'completed', result: s.got } : { phase: 'round' }),
  phases: {
    round: {
      async run(ctx) {
        if (!ctx.state.waited) return { state: { waited: true, got: null }, wait: { signals: ['go'] } };
        const wake: Wake | null = ctx.wake;
        return { state: { waited: true, got: wake?.signals[0]?.payload ?? 'no signal' } };
      },
      async after() {
        const hold = holdAfter;
        holdAfter = null;
        if (hold === null) return;
        hold.reached();
        await hold.leave;
      },
    },
  },
};

describe('engine: a wake-up while the run is leaving', () => {
  let t: TestEngine;

  beforeAll(async () => {
    t = await startTestEngine({ leaseSeconds: 60 });
    t.engine.register(waitOnce);
    await t.engine.start();
  });
  afterAll(async () => {
    await t.close();
  });

  it('[EXE-12] a signal that arrives after the waiting state committed, before the run left the node, still wakes it at once', async () => {
    const leave = deferred();
    const held = deferred();
    holdAfter = { reached: () => held.resolve(), leave: leave.promise };
    const { executionId } = await t.engine.submit({ workflow: waitOnce.name, input: {}, scope: SERVICE });
    await held.promise;
    // The wait is saved and committed, but the run has not left this node yet.
    expect((await executionRow(t.database, executionId)).state).toBe('waiting');
    expect(localRuns(t.engine)).toBe(1);

    expect(await t.engine.signal(executionId, 'go', { n: 1 })).toBe(true);
    // The signal queued it while the run is still here: its wake-up here, and then its job, find
    // it busy (the job is completed and re-armed a lease later).
    await eventually(async () => (await executionRow(t.database, executionId)).state === 'queued', 'the signal to queue it');
    await eventually(
      async () => (await t.database.query(`SELECT 1 FROM pgboss.job WHERE name = 'execution-advance' AND data->>'executionId' = $1 AND state = 'completed'`, [executionId])).length > 0,
      "the signal's job to find the run here",
    );
    expect((await executionRow(t.database, executionId)).state).toBe('queued');
    leave.resolve();

    expect(await waitForState(t.engine, executionId, ['completed', 'failed', 'cancelled', 'interrupted'], 20_000)).toMatchObject({ state: 'completed' });
    expect(await t.engine.result(executionId)).toEqual({ n: 1 });
  });
});

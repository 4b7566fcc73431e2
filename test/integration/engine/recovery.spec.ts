import type { Json, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, eventually, localRuns, SERVICE, waitForState, type Deferred } from './helpers';

interface SlowState {
  [key: string]: Json;
  done: boolean;
  by: string | null;
}

/** One phase that holds until the test lets it go. */
function slowWorkflow(hold: () => Deferred): Workflow<SlowState, null> {
  return {
    name: 'test.slow',
    initial: () => ({ done: false, by: null }),
    next: (s) => (s.done ? { end: 'completed', result: s.by } : { phase: 'work' }),
    phases: {
      work: {
        async run(ctx) {
          await hold().promise;
          return { state: { done: true, by: ctx.activity } };
        },
      },
    },
  };
}

describe('engine: recovery after the owner dies', () => {
  let t: TestEngine;
  let hold: Deferred;

  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(async () => {
    hold?.resolve();
    await t.close();
  });

  it('[EXE-08] a long phase whose owner saw its own recovery job is still recovered when that owner dies', async () => {
    hold = deferred();
    t.engine.register(slowWorkflow(() => hold));
    await t.engine.start();
    const { executionId } = await t.engine.submit({ workflow: 'test.slow', input: null, scope: SERVICE });

    // The phase outlives the recovery job of its claim: the owner (the only node) fetches it.
    await eventually(async () => {
      const rows = await t.database.query<{ state: string }>(
        `SELECT state FROM pgboss.job WHERE name = 'execution-advance' AND data->>'executionId' = $1 AND state = 'completed'`,
        [executionId],
      );
      return rows.length >= 1;
    }, 'the recovery job to be handled by the owner itself');
    expect(await t.engine.get(executionId)).toMatchObject({ state: 'running', generation: 1 });

    // Now the owner's run dies before its checkpoint (a crash of the run, its lease left to expire).
    t.faults.arm('checkpoint.before-commit', { kind: 'throw', error: new Error('the owner dies') });
    hold.resolve();
    await eventually(() => localRuns(t.engine) === 0, 'the run to die');

    // Another node comes up; the work must not stay stranded in `running`.
    hold = deferred();
    hold.resolve();
    const b = await t.node('node-b');
    b.engine.register(slowWorkflow(() => hold));
    await b.engine.start();
    const ended = await waitForState(b.engine, executionId, ['completed', 'failed', 'cancelled', 'interrupted'], 45_000);
    expect(ended).toMatchObject({ state: 'completed', generation: 2 });
  }, 90_000);

  it('[EXE-03] a batch of recovery jobs for one execution claims it once on a node: one takeover, one phase run', async () => {
    const runs: string[] = [];
    const counting: Workflow<SlowState, null> = {
      name: 'test.counted',
      initial: () => ({ done: false, by: null }),
      next: (s) => (s.done ? { end: 'completed', result: s.by } : { phase: 'work' }),
      phases: {
        work: {
          async run(ctx) {
            runs.push(ctx.activity);
            return { state: { done: true, by: ctx.activity } };
          },
        },
      },
    };
    // A database of its own, where every node registers this workflow. Node C's run dies before
    // its first checkpoint; C then stops, and its lease runs out.
    const own = await startTestEngine();
    try {
      const c = own.engine;
      c.register(counting);
      c.faults.arm('checkpoint.before-commit', { kind: 'throw', error: new Error('node C dies') });
      await c.start();
      const d = await own.node('node-d');
      d.engine.register(counting);
      await d.engine.start();
      const { executionId } = await c.submit({ workflow: 'test.counted', input: null, scope: SERVICE });
      await eventually(() => runs.length === 1 && localRuns(c) === 0, 'node C to die');
      await c.stop();
      await own.database.query(`UPDATE executions SET lease_until = now() - interval '1 second' WHERE id = $1`, [executionId]);
      // Node D's worker fetches five jobs of it in one batch.
      const runner = (d.engine as unknown as { runner: { onJobs(jobs: ReadonlyArray<{ data: { executionId: string } }>): Promise<void> } }).runner;
      await runner.onJobs(Array.from({ length: 5 }, () => ({ data: { executionId } })));
      const ended = await waitForState(d.engine, executionId, ['completed', 'failed', 'cancelled', 'interrupted']);
      expect(ended).toMatchObject({ state: 'completed', generation: 2 });
      expect(runs).toEqual(['work#1', 'work#2']);
    } finally {
      await own.close();
    }
  });
});

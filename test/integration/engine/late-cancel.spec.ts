import type { Json, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { SERVICE, waitForState } from './helpers';

interface Count {
  [key: string]: Json;
  n: number;
}

const twoSteps: Workflow<Count, null> = {
  name: 'test.two-steps',
  initial: () => ({ n: 0 }),
  next: (s) => (s.n < 2 ? { phase: 'step' } : { end: 'completed', result: s.n }),
  phases: {
    step: {
      async run({ state }) {
        return { state: { n: state.n + 1 } };
      },
    },
  },
};

describe('a cancel that arrives after the last checkpoint', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(twoSteps);
    await t.engine.start();
  });
  afterAll(async () => {
    await t.close();
  });

  it('[EXE-12] wins over completing: the execution ends cancelled, never completed after cancelling', async () => {
    let target = '';
    // Right after the last phase's checkpoint commits, a cancel request commits too; the run
    // then decides to end `completed`, which must not overwrite `cancelling`.
    t.faults.arm(
      'checkpoint.committed',
      {
        kind: 'call',
        run: async () => {
          await t.engine.cancel(target);
        },
      },
      { when: (c) => c.executionId === target && c.step === 2 },
    );
    const pending = t.engine.submit({ workflow: twoSteps.name, input: null, scope: SERVICE });
    target = (await pending).executionId;
    const view = await waitForState(t.engine, target, ['completed', 'cancelled', 'failed', 'interrupted']);
    expect(view.state).toBe('cancelled');
    const states = await t.database.query<{ type: string }>('SELECT type FROM execution_events WHERE execution_id = $1 ORDER BY seq', [target]);
    expect(states.filter((e) => e.type === 'execution.ended')).toHaveLength(1);
  });
});

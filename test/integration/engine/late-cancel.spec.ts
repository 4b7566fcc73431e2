import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { SERVICE, twoSteps, waitForState } from './helpers';

/** Two plain phases: the end saves the last phase's result itself (decision 056). */
const plainSteps = twoSteps('test.two-steps');
/** Two phases that emit an event each: the last one is checkpointed, then the execution ends. */
const emittingSteps = twoSteps('test.two-emitting-steps', { emit: true });

describe('a cancel that arrives after the last phase', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(plainSteps);
    t.engine.register(emittingSteps);
    await t.engine.start();
  });
  afterAll(async () => {
    await t.close();
  });

  /** Submits `workflow`, with a cancel request committed at fault point `at` of its last phase. */
  async function cancelAt(workflow: string, at: 'checkpoint.committed' | 'checkpoint.before-commit'): Promise<string> {
    let target = '';
    t.faults.arm(
      at,
      {
        kind: 'call',
        run: async () => {
          await t.engine.cancel(target);
        },
      },
      { when: (c) => c.executionId === target && c.step === 2 },
    );
    const pending = t.engine.submit({ workflow, input: null, scope: SERVICE });
    target = (await pending).executionId;
    const view = await waitForState(t.engine, target, ['completed', 'cancelled', 'failed', 'interrupted']);
    const ended = await t.database.query<{ type: string }>("SELECT type FROM execution_events WHERE execution_id = $1 AND type = 'execution.ended'", [target]);
    expect(ended).toHaveLength(1);
    return view.state;
  }

  it('[EXE-12] after the last checkpoint commits, wins over completing: the execution ends cancelled, never completed after cancelling', async () => {
    // The last phase's checkpoint commits, then a cancel request commits; the run then decides
    // to end `completed`, which must not overwrite `cancelling`.
    expect(await cancelAt(emittingSteps.name, 'checkpoint.committed')).toBe('cancelled');
  });

  it('[EXE-12] before the end that saves the last phase commits, wins over completing: that end finds cancelling and the execution ends cancelled', async () => {
    // The end that would save the last phase's result sees `cancelling` and writes nothing; the
    // phase's checkpoint keeps `cancelling`, and the loop cancels.
    expect(await cancelAt(plainSteps.name, 'checkpoint.before-commit')).toBe('cancelled');
  });
});

import type { Json, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { SERVICE } from './helpers';

const idle: Workflow<{ [key: string]: Json; done: boolean }, null> = {
  name: 'test.idle',
  initial: () => ({ done: false }),
  next: (s) => (s.done ? { end: 'completed' } : { phase: 'work' }),
  phases: { work: { run: async ({ state }) => ({ state: { ...state, done: true } }) } },
};

describe('recovery jobs', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(idle);
    await t.engine.start();
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['without a command key (batched job, written before the execution)', undefined],
    ['with a command key (job in the submit transaction)', 'key-1'],
  ])('[EXE-08] a submitted execution %s has its recovery job, due after twice the lease', async (_label, commandKey) => {
    const { executionId } = await t.engine.submit({ workflow: idle.name, input: null, scope: SERVICE, ...(commandKey ? { commandKey } : {}) });
    const jobs = await t.database.query<{ due_in: number }>(
      `SELECT EXTRACT(EPOCH FROM start_after - created_on)::float8 AS due_in FROM pgboss.job
        WHERE name = 'execution-advance' AND data->>'executionId' = $1`,
      [executionId],
    );
    expect(jobs.length).toBeGreaterThanOrEqual(1);
    // The lease of the test engine is 3 s: the job is due about 6 s after it was written.
    expect(Math.max(...jobs.map((j) => j.due_in))).toBeGreaterThanOrEqual(5);
  });
});

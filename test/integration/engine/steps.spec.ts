import type { Json, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';

interface StepsState {
  [key: string]: Json;
  i: number;
  n: number;
  k: number;
  last: Json;
}

const steps: Workflow<StepsState, { i: number; k: number }> = {
  name: 'test.steps',
  initial: ({ i, k }) => ({ i, n: 0, k, last: null }),
  next: (s) => (s.n < s.k ? { phase: 'step' } : { end: 'completed', result: s.last }),
  phases: {
    step: {
      async run({ state }) {
        return { state: { ...state, n: state.n + 1, last: { i: state.i, n: state.n + 1 } } };
      },
    },
  },
};

describe('engine: sequential durable phases', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(steps);
    await t.engine.start();
  });
  afterAll(async () => {
    await t.close();
  });

  it('[EXE-01] runs an execution of 10 phases to completed and keeps its result', async () => {
    const { executionId } = await t.engine.submit({ workflow: 'test.steps', input: { i: 7, k: 10 }, scope: { kind: 'service', id: '00000000-0000-7000-8000-000000000001', organizationId: null } });
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    expect(await t.engine.result(executionId)).toEqual({ i: 7, n: 10 });
    const view = await t.engine.get(executionId);
    expect(view).toMatchObject({ state: 'completed', generation: 1, step: 10 });
  });
});

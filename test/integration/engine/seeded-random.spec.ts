import type { Json, Workflow } from '@openbot/engine';
import type { EngineNode } from '@openbot/engine/node';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, eventually, forceTakeover, SERVICE, waitForState, type Deferred } from './helpers';

interface DrawState {
  [key: string]: Json;
  first: number[] | null;
  second: number[] | null;
}

/** Two phases that each draw three numbers from the phase context's seeded random. */
function drawWorkflow(node: string, draws: Array<{ node: string; step: number; numbers: number[] }>, hold: () => Deferred | null): Workflow<DrawState, null> {
  return {
    name: 'test.draw',
    initial: () => ({ first: null, second: null }),
    next: (s) => (s.first === null ? { phase: 'first' } : s.second === null ? { phase: 'second' } : { end: 'completed', result: s }),
    phases: {
      first: {
        async run(ctx) {
          const numbers = [ctx.random(), ctx.random(), ctx.random()];
          draws.push({ node, step: ctx.step, numbers });
          return { state: { ...ctx.state, first: numbers } };
        },
      },
      second: {
        async run(ctx) {
          const numbers = [ctx.random(), ctx.random(), ctx.random()];
          draws.push({ node, step: ctx.step, numbers });
          const held = hold();
          if (node === 'A' && held) await held.promise;
          return { state: { ...ctx.state, second: numbers } };
        },
      },
    },
  };
}

describe('engine: seeded random per execution', () => {
  let t: TestEngine;
  let a: EngineNode;
  let b: EngineNode;
  const draws: Array<{ node: string; step: number; numbers: number[] }> = [];
  let holdA: Deferred | null = null;

  beforeAll(async () => {
    t = await startTestEngine();
    a = t.engine;
    a.register(drawWorkflow('A', draws, () => holdA));
    b = (await t.node('node-b')).engine;
    b.register(drawWorkflow('B', draws, () => holdA));
    await a.start();
    await b.start();
  });
  afterAll(async () => {
    holdA?.resolve();
    await t.close();
  });

  it('seeded random (the base of FW-04): a phase replayed by a new owner after a takeover draws the same numbers as the first owner did', async () => {
    holdA = deferred();
    const { executionId } = await a.submit({ workflow: 'test.draw', input: null, scope: SERVICE });
    // A drew its numbers for step 2 and is stuck before its checkpoint; B takes over and replays step 2.
    await waitForState(a, executionId, ['running']);
    await eventually(() => draws.some((d) => d.node === 'A' && d.step === 2), 'node A to draw in step 2');
    await forceTakeover(t.database, b, executionId, 1);
    expect(await b.waitForEnd(executionId)).toBe('completed');
    holdA.resolve();

    const a2 = draws.find((d) => d.node === 'A' && d.step === 2)!;
    const b2 = draws.find((d) => d.node === 'B' && d.step === 2)!;
    expect(b2.numbers).toEqual(a2.numbers);
    const a1 = draws.find((d) => d.node === 'A' && d.step === 1)!;
    // Each step has a sequence of its own; all numbers are in [0, 1).
    expect(a1.numbers).not.toEqual(a2.numbers);
    for (const n of [...a1.numbers, ...a2.numbers]) expect(n >= 0 && n < 1).toBe(true);
    // The result the new owner saved holds the same numbers the first owner drew.
    expect(await b.result(executionId)).toEqual({ first: a1.numbers, second: a2.numbers });
  });

  it('seeded random (the base of FW-04): another execution of the same workflow gets another sequence (its own stored seed)', async () => {
    holdA = null;
    draws.length = 0;
    const one = await a.submit({ workflow: 'test.draw', input: null, scope: SERVICE });
    const two = await a.submit({ workflow: 'test.draw', input: null, scope: SERVICE });
    expect(await a.waitForEnd(one.executionId)).toBe('completed');
    expect(await a.waitForEnd(two.executionId)).toBe('completed');
    const first = (await a.result(one.executionId)) as DrawState;
    const second = (await a.result(two.executionId)) as DrawState;
    expect(first.first).not.toEqual(second.first);
  });
});

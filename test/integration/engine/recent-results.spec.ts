import type { Json, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { poolStatements } from './helpers';

const SCOPE = { kind: 'service', id: '00000000-0000-7000-8000-000000000601', organizationId: null } as const;

interface Returns {
  [key: string]: Json;
  size: number;
  done: boolean;
}

/** One phase, then completed with a result of `size` characters (and a Date, which JSON turns into text). */
const returns: Workflow<Returns, { size: number }> = {
  name: 'test.recent-results.returns',
  initial: ({ size }) => ({ size, done: false }),
  next: (s) => (s.done ? { end: 'completed', result: { at: new Date(0), text: 'x'.repeat(s.size), gone: undefined } as never } : { phase: 'work' }),
  phases: { work: { run: ({ state }) => Promise.resolve({ state: { ...state, done: true } }) } },
};

/** Completes, but its end work fails: the execution ends failed, with no result (ERR-01). */
const endFails: Workflow<{ [key: string]: Json; done: boolean }, null> = {
  name: 'test.recent-results.end-fails',
  initial: () => ({ done: false }),
  next: (s) => (s.done ? { end: 'completed', result: 'never seen' } : { phase: 'work' }),
  phases: { work: { run: ({ state }) => Promise.resolve({ state: { ...state, done: true } }) } },
  end: () => Promise.reject(new Error('end work failed')),
};

/** Counts the execution-row reads the pool serves (the statement `Engine.result` reads with). */
function rowReads(t: TestEngine): () => number {
  const statements = poolStatements(t.pool);
  return () => statements().filter((name) => name === 'engine.select_execution').length;
}

describe('engine: results of executions that completed on this node (decision 060)', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(returns);
    t.engine.register(endFails);
    await t.engine.start();
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t.close();
  });

  it('answers a small result without reading the row, exactly as the row reads back on another node', async () => {
    const { executionId } = await t.engine.submit({ workflow: returns.name, input: { size: 10 }, scope: SCOPE });
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    const reads = rowReads(t);
    const here = (await t.engine.result(executionId)) as { text: string };
    expect(reads()).toBe(0);
    expect(here).toStrictEqual({ at: '1970-01-01T00:00:00.000Z', text: 'xxxxxxxxxx' });
    // A caller that changes its copy changes nothing for the next caller.
    here.text = 'changed';
    expect(await t.engine.result(executionId)).toStrictEqual({ at: '1970-01-01T00:00:00.000Z', text: 'xxxxxxxxxx' });

    const other = await t.node('recent-results-reader');
    expect(await other.engine.result(executionId)).toStrictEqual({ at: '1970-01-01T00:00:00.000Z', text: 'xxxxxxxxxx' });
    jest.restoreAllMocks();
  });

  it('reads a large result from the row', async () => {
    const { executionId } = await t.engine.submit({ workflow: returns.name, input: { size: 10_000 }, scope: SCOPE });
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    const reads = rowReads(t);
    expect(await t.engine.result(executionId)).toStrictEqual({ at: '1970-01-01T00:00:00.000Z', text: 'x'.repeat(10_000) });
    expect(reads()).toBe(1);
    jest.restoreAllMocks();
  });

  it('keeps no result when the end work failed and the execution ended failed', async () => {
    const { executionId } = await t.engine.submit({ workflow: endFails.name, input: null, scope: SCOPE });
    expect(await t.engine.waitForEnd(executionId)).toBe('failed');
    expect(await t.engine.result(executionId)).toBeUndefined();
  });
});

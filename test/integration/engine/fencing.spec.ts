import type { Engine, ExecutionEvent, Json, Workflow } from '@openbot/engine';
import type { EngineNode } from '@openbot/engine/node';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, eventually, forceTakeover, localRuns, OutsideService, SERVICE, type Deferred } from './helpers';

interface FenceState {
  [key: string]: Json;
  by: string | null;
  answer: Json;
}

/**
 * One phase that makes one safe outside call and records which activity (`<phase>#<generation>`)
 * produced the state. The outside service answers with the node that asked.
 */
function fenceWorkflow(outside: OutsideService, node: string): Workflow<FenceState, null> {
  return {
    name: 'test.fence',
    initial: () => ({ by: null, answer: null }),
    next: (s) => (s.by === null ? { phase: 'work' } : { end: 'completed', result: s }),
    phases: {
      work: {
        async run(ctx) {
          const answer = await ctx.calls.call('op', { safe: true }, (request) => outside.send(request, node));
          ctx.emit('test.work.done', { by: ctx.activity, node });
          return { state: { by: ctx.activity, answer } };
        },
      },
    },
  };
}

function runnerOf(engine: Engine): { advance(id: string): Promise<'started' | 'busy' | 'idle'> } {
  return (engine as unknown as { runner: { advance(id: string): Promise<'started' | 'busy' | 'idle'> } }).runner;
}

async function readAll(engine: Engine, id: string): Promise<ExecutionEvent[]> {
  const events: ExecutionEvent[] = [];
  for await (const event of engine.observe(id, 0, undefined, false)) events.push(event);
  return events;
}

describe('engine: fencing by generation', () => {
  let t: TestEngine;
  let a: EngineNode;
  let b: EngineNode;
  let outside: OutsideService;
  /** Holds node A's outside requests until the test lets them answer (a slow or partitioned A). */
  let holdA: Deferred | null = null;

  beforeAll(async () => {
    t = await startTestEngine();
    outside = new OutsideService(async (request) => {
      if (request.from === 'A' && holdA) await holdA.promise;
      return { from: request.from, attempt: request.attempt };
    });
    a = t.engine;
    a.register(fenceWorkflow(outside, 'A'));
    const nodeB = await t.node('node-b');
    b = nodeB.engine;
    b.register(fenceWorkflow(outside, 'B'));
    await a.start();
    await b.start();
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => {
    outside.requests.length = 0;
    holdA = null;
  });

  it('[EXE-03] a takeover adds one to the generation; the old owner cannot checkpoint over the new owner (EXE-04)', async () => {
    const paused = deferred();
    const reached = deferred();
    t.faults.arm('phase.started', { kind: 'call', run: async () => (reached.resolve(), await paused.promise) });
    const { executionId } = await a.submit({ workflow: 'test.fence', input: null, scope: SERVICE });
    await reached.promise;
    expect(await a.get(executionId)).toMatchObject({ state: 'running', generation: 1 });

    // A is stuck at the start of its phase; its lease runs out and B takes over.
    const taken = await forceTakeover(t.database, b, executionId, 1);
    expect(taken.generation).toBe(2);
    expect(await b.waitForEnd(executionId)).toBe('completed');
    const ended = await b.get(executionId);
    expect(ended).toMatchObject({ state: 'completed', generation: 2, step: 1 });
    expect(await b.result(executionId)).toEqual({ by: 'work#2', answer: { from: 'B', attempt: 1 } });

    // A wakes up and finishes its phase: it reuses B's saved result, but its checkpoint is fenced.
    paused.resolve();
    await eventually(() => localRuns(a) === 0, 'node A to drop its lost run');
    expect(await a.get(executionId)).toMatchObject({ state: 'completed', generation: 2, step: 1 });
    expect(await a.result(executionId)).toEqual({ by: 'work#2', answer: { from: 'B', attempt: 1 } });
    const events = await readAll(a, executionId);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === 'test.work.done').map((e) => e.by)).toEqual(['work#2']);
    expect(events.filter((e) => e.type === 'execution.ended')).toHaveLength(1);
    // The outside service was asked once, by B; A found B's result in the call log.
    expect(outside.requests.map((r) => r.from)).toEqual(['B']);
  });

  it('[EXE-04] an old owner saves its late outside result (CALL-05) but cannot advance the new owner’s state', async () => {
    holdA = deferred();
    const { executionId } = await a.submit({ workflow: 'test.fence', input: null, scope: SERVICE });
    // A's request is in flight at the outside service (its call row says `sending`).
    await eventually(() => outside.requests.some((r) => r.from === 'A'), 'A to send its request');
    const [sending] = await t.database.query<{ status: string; generation: number; attempt: number; idempotency_key: string }>(
      'SELECT status, generation, attempt, idempotency_key FROM execution_calls WHERE execution_id = $1',
      [executionId],
    );
    expect(sending).toMatchObject({ status: 'sending', generation: 1, attempt: 1 });

    await forceTakeover(t.database, b, executionId, 1);
    expect(await b.waitForEnd(executionId)).toBe('completed');
    expect(await b.result(executionId)).toEqual({ by: 'work#2', answer: { from: 'B', attempt: 2 } });

    // A's answer arrives late: the call log keeps it, the execution does not change.
    holdA.resolve();
    await eventually(async () => {
      const rows = await t.database.query<{ status: string }>('SELECT status FROM execution_calls WHERE execution_id = $1 AND generation = 1', [executionId]);
      return rows[0]?.status === 'succeeded';
    }, 'A to save its late result');
    await eventually(() => localRuns(a) === 0, 'node A to drop its lost run');

    const calls = await t.database.query<{ generation: number; attempt: number; status: string; idempotency_key: string; has_result: boolean }>(
      `SELECT generation, attempt, status, idempotency_key, result IS NOT NULL AS has_result
         FROM execution_calls WHERE execution_id = $1 ORDER BY attempt`,
      [executionId],
    );
    expect(calls).toEqual([
      { generation: 1, attempt: 1, status: 'succeeded', idempotency_key: sending!.idempotency_key, has_result: true },
      { generation: 2, attempt: 2, status: 'succeeded', idempotency_key: sending!.idempotency_key, has_result: true },
    ]);
    expect(await b.get(executionId)).toMatchObject({ state: 'completed', generation: 2, step: 1 });
    expect(await b.result(executionId)).toEqual({ by: 'work#2', answer: { from: 'B', attempt: 2 } });
    const events = await readAll(b, executionId);
    expect(events.filter((e) => e.type === 'test.work.done').map((e) => e.node)).toEqual(['B']);
    expect(outside.requests.map((r) => `${r.from}:${r.attempt}`)).toEqual(['A:1', 'B:2']);
  });

  it('[EXE-03] a node never takes an execution whose lease another node holds', async () => {
    const paused = deferred();
    const reached = deferred();
    t.faults.arm('phase.started', { kind: 'call', run: async () => (reached.resolve(), await paused.promise) });
    const { executionId } = await a.submit({ workflow: 'test.fence', input: null, scope: SERVICE });
    await reached.promise;
    // B is poked several times while A's lease is valid: nothing moves.
    for (let i = 0; i < 5; i++) await b.signal(executionId, 'test.poke', i);
    // A direct claim attempt by B's runner (what a queue job or a notification does) is refused.
    for (let i = 0; i < 3; i++) expect(await runnerOf(b).advance(executionId)).toBe('busy');
    expect(await b.get(executionId)).toMatchObject({ state: 'running', generation: 1 });
    expect(localRuns(b)).toBe(0);
    paused.resolve();
    expect(await a.waitForEnd(executionId)).toBe('completed');
    expect(await a.get(executionId)).toMatchObject({ generation: 1 });
    expect(await a.result(executionId)).toEqual({ by: 'work#1', answer: { from: 'A', attempt: 1 } });
  });
});

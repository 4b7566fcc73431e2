import { callQueries, type CallKind, type Json, type Workflow } from '@openbot/engine';
import type { EngineNode } from '@openbot/engine/node';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, forceTakeover, OutsideService, SERVICE } from './helpers';

interface OpState {
  [key: string]: Json;
  safe: boolean;
  kind: string;
  answer: Json;
  done: boolean;
}

/** One phase with one outside call `op` of the kind and safety given in the input. */
function opWorkflow(outside: OutsideService, node: string): Workflow<OpState, { safe: boolean; kind: string }> {
  return {
    name: 'test.op',
    initial: (input) => ({ safe: input.safe, kind: input.kind, answer: null, done: false }),
    next: (s) => (s.done ? { end: 'completed', result: s.answer } : { phase: 'work' }),
    phases: {
      work: {
        async run(ctx) {
          const answer = await ctx.calls.call('op', { safe: ctx.state.safe, kind: ctx.state.kind as CallKind, attempts: 3 }, (request) => outside.send(request, node));
          return { state: { ...ctx.state, answer, done: true } };
        },
      },
    },
  };
}

describe('engine: call rows', () => {
  let t: TestEngine;
  let a: EngineNode;
  let b: EngineNode;
  let script: (request: { attempt: number; from: string }, n: number) => Promise<Json> | Json;
  const outside = new OutsideService((request, n) => script(request, n));

  beforeAll(async () => {
    t = await startTestEngine();
    a = t.engine;
    a.register(opWorkflow(outside, 'A'));
    b = (await t.node('node-b')).engine;
    b.register(opWorkflow(outside, 'B'));
    await a.start();
    await b.start();
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => {
    outside.requests.length = 0;
    t.faults.disarm();
  });

  it('[STC-10] each call row keeps its kind; the shared queries answer it by ID, by step and by latest attempt, with every attempt kept', async () => {
    script = (request) => {
      if (request.attempt < 3) throw new Error('busy');
      return { ok: request.attempt };
    };
    const { executionId } = await a.submit({ workflow: 'test.op', input: { safe: true, kind: 'model' }, scope: SERVICE });
    expect(await a.waitForEnd(executionId)).toBe('completed');
    const byStep = await callQueries.byStep(t.pool, executionId, 1);
    expect(byStep.map((c) => [c.attempt, c.kind, c.status])).toEqual([
      [1, 'model', 'failed'],
      [2, 'model', 'failed'],
      [3, 'model', 'succeeded'],
    ]);
    // A failed attempt that was retried is not a failure of the call: no error ID.
    expect(byStep.map((c) => c.error_id)).toEqual([null, null, null]);
    const latest = await callQueries.latestAttempt(t.pool, executionId, '1:op');
    expect(latest).toMatchObject({ attempt: 3, status: 'succeeded', kind: 'model' });
    expect(await callQueries.byId(t.pool, byStep[0]!.id)).toMatchObject({ attempt: 1, call_key: '1:op', kind: 'model' });
    expect(await callQueries.byId(t.pool, '00000000-0000-7000-8000-00000000dead')).toBeNull();
    expect(await callQueries.latestAttempt(t.pool, executionId, '1:none')).toBeNull();
  });

  it('[ERR-01] a call that failed for good gets an error ID on its row, with its sealed cause; the failed execution carries that same ID', async () => {
    script = () => {
      throw new Error('refused');
    };
    const { executionId } = await a.submit({ workflow: 'test.op', input: { safe: false, kind: 'app' }, scope: SERVICE });
    expect(await a.waitForEnd(executionId)).toBe('failed');
    const call = (await callQueries.latestAttempt(t.pool, executionId, '1:op'))!;
    expect(call).toMatchObject({ status: 'failed', kind: 'app', error_id: expect.any(String) });
    expect((await a.get(executionId))?.errorId).toBe(call.error_id);
    const records = await t.database.query<{ id: string; cause_id: string | null }>('SELECT id, cause_id FROM error_records WHERE execution_id = $1', [executionId]);
    expect(records).toEqual([{ id: call.error_id, cause_id: expect.any(String) }]);
  });

  it('[CALL-03] [ERR-01] an owner that dies after a call failed for good, before the failed end: the new owner reuses that failure and sends nothing again', async () => {
    script = () => {
      throw new Error('refused');
    };
    const reached = deferred();
    const dead = deferred();
    // A saves the call's failure, then stops before its failed end commits (a crash there).
    t.faults.arm('call.failed.committed', { kind: 'call', run: async () => (reached.resolve(), await dead.promise) });
    const { executionId } = await a.submit({ workflow: 'test.op', input: { safe: false, kind: 'channel' }, scope: SERVICE });
    await reached.promise;
    const failed = (await callQueries.latestAttempt(t.pool, executionId, '1:op'))!;
    expect(failed).toMatchObject({ status: 'failed', generation: 1, error_id: expect.any(String) });

    await forceTakeover(t.database, b, executionId, 1);
    expect(await b.waitForEnd(executionId)).toBe('failed');
    dead.resolve();
    // Sent once, by A only; B ended with A's failure and its error ID, and no second record.
    expect(outside.requests.map((r) => r.from)).toEqual(['A']);
    expect((await b.get(executionId))?.errorId).toBe(failed.error_id);
    expect(await callQueries.byKey(t.pool, executionId, '1:op')).toHaveLength(1);
    const records = await t.database.query<{ id: string }>('SELECT id FROM error_records WHERE execution_id = $1', [executionId]);
    expect(records.map((r) => r.id)).toEqual([failed.error_id]);
  });
});

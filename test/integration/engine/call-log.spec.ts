import { callQueries, NotAwaitingDecision, type Engine, type ExecutionEvent, type Json, type Workflow } from '@openbot/engine';
import type { EngineNode } from '@openbot/engine/node';
import { associatedData } from '@openbot/platform';
import { Client } from 'pg';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, eventually, forceTakeover, localRuns, OutsideService, SERVICE, waitForState } from './helpers';

interface CallState {
  [key: string]: Json;
  safe: boolean;
  attempts: number;
  /** Wait for a `go` signal before the call (to park the execution in `waiting`). */
  park: boolean;
  parked: boolean;
  answer: Json;
  done: boolean;
  by: string | null;
}

type CallInput = Partial<Pick<CallState, 'safe' | 'attempts' | 'park'>> & { retryPhase?: boolean };

/** Step 1 (optional): wait for `go`; then one outside call `op`, whose answer becomes the result. */
function callWorkflow(outside: OutsideService, node: string): Workflow<CallState & { retryPhase: boolean }, CallInput> {
  const work = async (ctx: Parameters<Workflow<CallState & { retryPhase: boolean }>['phases'][string]['run']>[0]) => {
    const s = ctx.state;
    const answer = await ctx.calls.call('op', { safe: s.safe, attempts: s.attempts }, (request) => outside.send(request, node));
    return { state: { ...s, answer, done: true, by: ctx.activity } };
  };
  return {
    name: 'test.call',
    initial: (input) => ({
      safe: input.safe ?? true,
      attempts: input.attempts ?? 3,
      park: input.park ?? false,
      parked: false,
      answer: null,
      done: false,
      by: null,
      retryPhase: input.retryPhase ?? false,
    }),
    next: (s) => {
      if (s.park && !s.parked) return { phase: 'park' };
      if (!s.done) return { phase: s.retryPhase ? 'workWithRetry' : 'work' };
      return { end: 'completed', result: { answer: s.answer, by: s.by } };
    },
    phases: {
      park: { run: async ({ state }) => ({ state: { ...state, parked: true }, wait: { signals: ['go'] } }) },
      work: { run: work },
      workWithRetry: { run: work, retries: 1 },
    },
  };
}

async function readAll(engine: Engine, id: string): Promise<ExecutionEvent[]> {
  const events: ExecutionEvent[] = [];
  for await (const event of engine.observe(id, 0, undefined, false)) events.push(event);
  return events;
}

describe('engine: the call log', () => {
  let t: TestEngine;
  let a: EngineNode;
  let b: EngineNode;
  /** What the outside service does for the current test (default: answer at once). */
  let script: (request: { idempotencyKey: string; attempt: number; from: string }, n: number) => Promise<Json> | Json;
  const outside = new OutsideService((request, n) => script(request, n));
  const callRows = (id: string) =>
    t.database.query<{ attempt: number; generation: number; status: string; safe: boolean; idempotency_key: string; step: number; call_key: string }>(
      'SELECT attempt, generation, status, safe, idempotency_key, step, call_key FROM execution_calls WHERE execution_id = $1 ORDER BY attempt',
      [id],
    );

  beforeAll(async () => {
    t = await startTestEngine();
    a = t.engine;
    a.register(callWorkflow(outside, 'A'));
    const nodeB = await t.node('node-b');
    b = nodeB.engine;
    b.register(callWorkflow(outside, 'B'));
    await a.start();
    await b.start();
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => {
    outside.requests.length = 0;
    script = (request) => ({ from: request.from, attempt: request.attempt });
    t.faults.disarm();
    b.faults.disarm();
  });

  it('[CALL-01] an outside call saves its intent, then marks itself sending, then saves its result, each its own commit', async () => {
    const seen: Array<{ at: string; status: string | undefined; outsideCalls: number }> = [];
    const look = (at: string) => async () => {
      const [row] = await t.database.query<{ status: string }>('SELECT status FROM execution_calls ORDER BY created_at DESC LIMIT 1');
      seen.push({ at, status: row?.status, outsideCalls: outside.calls });
    };
    t.faults.arm('call.intent.committed', { kind: 'call', run: look('intent') });
    t.faults.arm('call.sending.committed', { kind: 'call', run: look('sending') });
    t.faults.arm('call.result.committed', { kind: 'call', run: look('result') });
    const { executionId } = await a.submit({ workflow: 'test.call', input: { safe: false }, scope: SERVICE });
    expect(await a.waitForEnd(executionId)).toBe('completed');
    expect(seen).toEqual([
      { at: 'intent', status: 'intent', outsideCalls: 0 },
      { at: 'sending', status: 'sending', outsideCalls: 0 },
      { at: 'result', status: 'succeeded', outsideCalls: 1 },
    ]);
    expect(await callRows(executionId)).toEqual([
      expect.objectContaining({ attempt: 1, generation: 1, status: 'succeeded', safe: false, step: 1, call_key: '1:op' }),
    ]);
    expect(await a.result(executionId)).toEqual({ answer: { from: 'A', attempt: 1 }, by: 'work#1' });
  });

  it('[STC-10][CALL-02] a safe call that fails twice then succeeds uses 3 attempts with the same idempotency key; the shared queries keep them all', async () => {
    script = (request, n) => {
      if (n <= 2) throw new Error(`outside failure ${n}`);
      return { ok: request.attempt };
    };
    const { executionId } = await a.submit({ workflow: 'test.call', input: { safe: true, attempts: 3 }, scope: SERVICE });
    expect(await a.waitForEnd(executionId)).toBe('completed');
    expect(outside.requests.map((r) => r.attempt)).toEqual([1, 2, 3]);
    const keys = new Set(outside.requests.map((r) => r.idempotencyKey));
    expect(keys.size).toBe(1);
    expect(await a.result(executionId)).toEqual({ answer: { ok: 3 }, by: 'work#1' });

    // Full history stays, through the shared queries (by call, by step, latest attempt).
    const [key] = [...keys];
    const byKey = await callQueries.byKey(t.pool, executionId, '1:op');
    expect(byKey.map((c) => [c.attempt, c.status, c.idempotency_key])).toEqual([
      [1, 'failed', key],
      [2, 'failed', key],
      [3, 'succeeded', key],
    ]);
    const byStep = await callQueries.byStep(t.pool, executionId, 1);
    expect(byStep.map((c) => c.id)).toEqual(byKey.map((c) => c.id));
    expect(await callQueries.byStep(t.pool, executionId, 2)).toEqual([]);
    expect(await callQueries.latestUnknown(t.pool, executionId)).toBeNull();
  });

  it('[CALL-02] a safe call gives up after its attempts; an unsafe call that fails is never repeated', async () => {
    script = () => {
      throw new Error('outside refuses');
    };
    const safe = await a.submit({ workflow: 'test.call', input: { safe: true, attempts: 2 }, scope: SERVICE });
    expect(await a.waitForEnd(safe.executionId)).toBe('failed');
    expect(outside.requests.map((r) => r.attempt)).toEqual([1, 2]);
    const failed = await a.get(safe.executionId);
    expect(failed?.errorId).toEqual(expect.any(String));
    expect(await t.database.query('SELECT id FROM error_records WHERE id = $1', [failed!.errorId])).toHaveLength(1);

    outside.requests.length = 0;
    const unsafe = await a.submit({ workflow: 'test.call', input: { safe: false, attempts: 5 }, scope: SERVICE });
    expect(await a.waitForEnd(unsafe.executionId)).toBe('failed');
    expect(outside.calls).toBe(1);
    expect((await callRows(unsafe.executionId)).map((c) => c.status)).toEqual(['failed']);
  });

  it('[EXE-10] a new owner runs under a new phase name and reuses the saved result: the outside service is called once', async () => {
    // Node A saves the call's result, then dies before its checkpoint commits.
    t.faults.arm('checkpoint.before-commit', { kind: 'throw', error: new Error('node A dies before its checkpoint') });
    const { executionId } = await a.submit({ workflow: 'test.call', input: { safe: false }, scope: SERVICE });
    await eventually(() => localRuns(a) === 0, 'node A to lose its run');
    expect((await callRows(executionId)).map((c) => c.status)).toEqual(['succeeded']);
    expect(await a.get(executionId)).toMatchObject({ state: 'running', generation: 1, step: 0 });

    await forceTakeover(t.database, b, executionId, 1);
    expect(await b.waitForEnd(executionId)).toBe('completed');
    expect(outside.requests.map((r) => r.from)).toEqual(['A']);
    // The result is A's saved answer, delivered to B's activity `work#2`.
    expect(await b.result(executionId)).toEqual({ answer: { from: 'A', attempt: 1 }, by: 'work#2' });
    expect(await b.get(executionId)).toMatchObject({ generation: 2, step: 1 });
    expect(await callRows(executionId)).toHaveLength(1);
  });

  it('[CALL-03] an unsafe write whose result was lost waits in outcome_unknown; a decision resumes it without calling outside again', async () => {
    // A sends, the outside service acts, and A's result is lost before it is saved (A hangs, then fails).
    const releaseA = deferred();
    t.faults.arm('call.result.before-commit', {
      kind: 'call',
      run: async () => {
        await releaseA.promise;
        throw new Error('node A lost the result');
      },
    });
    const { executionId } = await a.submit({ workflow: 'test.call', input: { safe: false }, scope: SERVICE });
    await eventually(() => outside.calls === 1, 'A to send');
    expect((await callRows(executionId)).map((c) => c.status)).toEqual(['sending']);

    await forceTakeover(t.database, b, executionId, 1);
    await waitForState(b, executionId, ['outcome_unknown']);
    expect(outside.calls).toBe(1);
    expect(await callRows(executionId)).toEqual([expect.objectContaining({ attempt: 1, generation: 1, status: 'unknown', safe: false })]);
    expect((await readAll(b, executionId)).map((e) => e.type)).toContain('execution.outcome_unknown');
    // Nothing moves it on its own: a recovery job that finds it leaves it waiting for a decision.
    const generation = (await b.get(executionId))!.generation;
    await (b as unknown as { runner: { onJobs(jobs: ReadonlyArray<{ data: { executionId: string } }>): Promise<void> } }).runner.onJobs([{ data: { executionId } }]);
    expect(await b.get(executionId)).toMatchObject({ state: 'outcome_unknown', generation });

    // An operator confirms the write succeeded and supplies its result.
    expect(await b.decide(executionId, { decision: 'succeeded', result: { decided: 'by operator' } })).toEqual({ state: 'queued' });
    expect(await b.waitForEnd(executionId)).toBe('completed');
    expect(await b.result(executionId)).toEqual({ answer: { decided: 'by operator' }, by: expect.stringMatching(/^work#\d+$/) });
    expect(outside.calls).toBe(1);
    expect((await callRows(executionId)).map((c) => c.status)).toEqual(['succeeded']);

    // A deciding again, on an execution not in outcome_unknown, is refused.
    await expect(b.decide(executionId, { decision: 'succeeded', result: null })).rejects.toBeInstanceOf(NotAwaitingDecision);
    await expect(b.decide(executionId, { decision: 'stop' })).rejects.toMatchObject({ type: 'ExecutionNotAwaitingDecision' });

    // The old owner, released, cannot change anything.
    releaseA.resolve();
    await eventually(() => localRuns(a) === 0, 'node A to drop its lost run');
    expect(await b.get(executionId)).toMatchObject({ state: 'completed' });
    expect(await b.result(executionId)).toEqual({ answer: { decided: 'by operator' }, by: expect.stringMatching(/^work#\d+$/) });
    expect(outside.calls).toBe(1);
  });

  /**
   * A's unsafe call is out when B takes over (the call becomes unknown, B waits in
   * outcome_unknown); `arrive` lets A's late answer be saved. `expectCompletedWithA` checks that B
   * then completes with A's answer, sent once, and that A drops its lost run.
   */
  async function lateAnswerOfA(): Promise<{ arrive: () => void; expectCompletedWithA: () => Promise<void> }> {
    const releaseA = deferred();
    t.faults.arm('call.result.before-commit', { kind: 'pause', until: releaseA.promise });
    const { executionId } = await a.submit({ workflow: 'test.call', input: { safe: false }, scope: SERVICE });
    await eventually(() => outside.calls === 1, 'A to send');
    await forceTakeover(t.database, b, executionId, 1);
    await waitForState(b, executionId, ['outcome_unknown']);
    const expectCompletedWithA = async () => {
      expect(await waitForState(b, executionId, ['completed', 'failed', 'cancelled', 'interrupted'])).toMatchObject({ state: 'completed' });
      expect(await b.result(executionId)).toEqual({ answer: { from: 'A', attempt: 1 }, by: expect.stringMatching(/^work#\d+$/) });
      expect(outside.calls).toBe(1);
      expect((await callRows(executionId)).map((c) => c.status)).toEqual(['succeeded']);
      await eventually(() => localRuns(a) === 0, 'node A to drop its lost run');
    };
    return { arrive: () => releaseA.resolve(), expectCompletedWithA };
  }

  it('[CALL-03] a result saved late by the old owner ends outcome_unknown without a decision, and is reused, not re-requested (CALL-05)', async () => {
    const late = await lateAnswerOfA();
    // A was only slow: its answer arrives and is saved in the call log.
    late.arrive();
    await late.expectCompletedWithA();
  });

  it('[CALL-05] an old owner that dies right after saving its late result leaves nothing waiting: the save and the end of outcome_unknown commit together', async () => {
    const late = await lateAnswerOfA();
    // A's answer arrives late; A is gone the moment its save commits, before anything else it does.
    t.faults.arm('call.result.committed', { kind: 'throw', error: new Error('node A died right after the commit') });
    late.arrive();
    await late.expectCompletedWithA();
  });

  it('[CALL-03] an unsafe call interrupted after it was marked sending is not sent again by a retry; decisions fail or stop it (RES-02)', async () => {
    const waiting = await a.submit({ workflow: 'test.call', input: { safe: false, park: true }, scope: SERVICE });
    await waitForState(a, waiting.executionId, ['waiting']);
    await expect(a.decide(waiting.executionId, { decision: 'failed' })).rejects.toBeInstanceOf(NotAwaitingDecision);
    expect((await a.get(waiting.executionId))?.state).toBe('waiting');
    await a.cancel(waiting.executionId);

    const ids: string[] = [];
    for (const decision of ['failed', 'stop'] as const) {
      t.faults.arm('call.sending.committed', { kind: 'throw', error: new Error('the phase broke after marking the call sending') });
      const { executionId } = await a.submit({ workflow: 'test.call', input: { safe: false, retryPhase: true }, scope: SERVICE });
      ids.push(executionId);
      await waitForState(a, executionId, ['outcome_unknown']);
      expect(outside.calls).toBe(0);
      expect((await callRows(executionId)).map((c) => c.status)).toEqual(['unknown']);
      const decided = await a.decide(executionId, { decision });
      expect(decided).toEqual({ state: decision === 'failed' ? 'failed' : 'cancelled' });
      expect(await a.waitForEnd(executionId)).toBe(decision === 'failed' ? 'failed' : 'cancelled');
      expect((await callRows(executionId)).map((c) => c.status)).toEqual(['failed']);
    }
    const failed = await a.get(ids[0]!);
    expect(failed?.errorId).toEqual(expect.any(String));
    expect(await t.database.query('SELECT id FROM error_records WHERE id = $1', [failed!.errorId])).toHaveLength(1);
    expect((await a.get(ids[1]!))?.errorId).toBeNull();
    expect(outside.calls).toBe(0);
  });

  it('[EXE-12] a cancel that commits while an unsafe call is out, whose answer is then lost, still ends cancelled: outcome_unknown never overwrites cancelling', async () => {
    // The cancel commits on the other node, so this node's gate has not closed when the lost
    // answer turns the call unknown: the unknown-outcome save must leave `cancelling` in place.
    const { executionId } = await a.submit({ workflow: 'test.call', input: { safe: false, park: true }, scope: SERVICE });
    await waitForState(a, executionId, ['waiting']);
    script = async () => {
      await b.cancel(executionId);
      throw Object.assign(new Error('the connection broke after the request was written'), { resultLost: true });
    };
    await a.signal(executionId, 'go', null);
    expect(await a.waitForEnd(executionId)).toBe('cancelled');
    expect(outside.calls).toBe(1);
    const types = (await readAll(a, executionId)).map((e) => e.type);
    expect(types).not.toContain('execution.outcome_unknown');
    expect(types.filter((type) => type === 'execution.ended')).toHaveLength(1);
    expect((await callRows(executionId)).map((c) => c.status)).toEqual(['unknown']);
  });

  it('[CALL-06] killing every engine connection right after the result commit: the execution completes, the provider is called once', async () => {
    const admin = new Client({ connectionString: t.database.url });
    await admin.connect();
    try {
      let killed = 0;
      t.faults.arm('call.result.committed', {
        kind: 'call',
        run: async () => {
          const { rows } = await admin.query<{ n: number }>(
            `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
          );
          killed = rows[0]!.n;
        },
      });
      const { executionId } = await a.submit({ workflow: 'test.call', input: { safe: false }, scope: SERVICE });
      await waitForState(b, executionId, ['completed']);
      expect(killed).toBeGreaterThan(0);
      expect(outside.calls).toBe(1);
      expect(await b.result(executionId)).toEqual({ answer: { from: 'A', attempt: 1 }, by: expect.stringMatching(/^work#\d+$/) });
      expect((await callRows(executionId)).map((c) => c.status)).toEqual(['succeeded']);
    } finally {
      await admin.end();
    }
  });

  it('[CALL-06] a result save whose connection dies mid-statement is retried with the held result; the provider is not called again', async () => {
    const admin = new Client({ connectionString: t.database.url });
    const locker = new Client({ connectionString: t.database.url });
    await admin.connect();
    await locker.connect();
    try {
      const exclude = [(await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid, (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid];
      let executionId = '';
      let victims = 0;
      let watcher: Promise<void> = Promise.resolve();
      t.faults.arm('call.result.before-commit', {
        kind: 'call',
        run: async () => {
          // Every engine connection dies; then the result save is caught mid-statement and killed too.
          await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> ALL($1::int[]) AND backend_type = 'client backend'`, [exclude]);
          await locker.query('BEGIN');
          await locker.query('SELECT id FROM execution_calls WHERE execution_id = $1 FOR UPDATE', [executionId]);
          watcher = (async () => {
            const victim = await eventually(async () => {
              const { rows } = await admin.query<{ pid: number }>(
                `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE execution_calls%''succeeded''%'`,
              );
              return rows[0];
            }, 'the result save to wait on the row lock');
            await admin.query('SELECT pg_terminate_backend($1)', [victim.pid]);
            victims += 1;
            await locker.query('ROLLBACK');
          })();
        },
      }, {
        when: (c) => {
          executionId = c.executionId;
          return true;
        },
      });
      const submitted = await a.submit({ workflow: 'test.call', input: { safe: false }, scope: SERVICE });
      await waitForState(b, submitted.executionId, ['completed']);
      await watcher;
      expect(victims).toBe(1);
      expect(outside.calls).toBe(1);
      expect(await b.result(submitted.executionId)).toEqual({ answer: { from: 'A', attempt: 1 }, by: expect.stringMatching(/^work#\d+$/) });
      expect(await callRows(submitted.executionId)).toEqual([expect.objectContaining({ attempt: 1, status: 'succeeded' })]);
    } finally {
      await locker.end();
      await admin.end();
    }
  });

  it('[CALL-07] invalid stored execution data is a failure with an error record, not an outage retried forever', async () => {
    const { executionId } = await a.submit({ workflow: 'test.call', input: { park: true }, scope: SERVICE });
    await waitForState(a, executionId, ['waiting']);
    // Flip one byte of the sealed data: it no longer authenticates.
    await t.database.query(`UPDATE executions SET data = set_byte(data, length(data) - 1, get_byte(data, length(data) - 1) # 255) WHERE id = $1`, [executionId]);
    expect(await a.signal(executionId, 'go', null)).toBe(true);
    expect(await a.waitForEnd(executionId)).toBe('failed');
    const view = await a.get(executionId);
    expect(view).toMatchObject({ state: 'failed', category: 'internal', generation: 2 });
    const [record] = await t.database.query<{ category: string; cause_id: string }>('SELECT category, cause_id FROM error_records WHERE id = $1', [view!.errorId]);
    expect(record).toMatchObject({ category: 'internal' });
    const [sealed] = await t.database.query<{ key_id: string; data: Buffer; purpose: string }>('SELECT key_id, data, purpose FROM sealed_records WHERE id = $1', [record!.cause_id]);
    const cause = t.sealer.open({ keyId: sealed!.key_id, data: sealed!.data }, associatedData(record!.cause_id, sealed!.purpose)).toString('utf8');
    expect(cause).toContain('cannot be read');
    expect(outside.calls).toBe(0);
    // It stays failed: no node claims it again.
    await a.signal(executionId, 'go', null);
    expect(await a.get(executionId)).toMatchObject({ state: 'failed', generation: 2 });
  });
});

import type { Json, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, eventually, SERVICE, waitForState, type Deferred } from './helpers';

interface Gate {
  [key: string]: Json;
  opened: boolean;
}

/** Waits for a `go` signal, then ends. */
const gate: Workflow<Gate, null> = {
  name: 'test.gate',
  initial: () => ({ opened: false }),
  next: (s) => (s.opened ? { end: 'completed', result: 'opened' } : { phase: 'wait' }),
  phases: {
    wait: {
      async run(ctx) {
        if (ctx.wake?.signals.some((s) => s.name === 'go')) return { state: { opened: true } };
        return { state: ctx.state, wait: { signals: ['go'] } };
      },
    },
  },
};

let held: { started: Deferred; release: Deferred; aborted: string | null } = { started: deferred(), release: deferred(), aborted: null };
/** One phase held open until the test releases it; records whether its gate closed meanwhile. */
const holder: Workflow<Gate, null> = {
  name: 'test.holder',
  initial: () => ({ opened: false }),
  next: (s) => (s.opened ? { end: 'completed', result: 'released' } : { phase: 'hold' }),
  phases: {
    hold: {
      async run(ctx) {
        ctx.signal.addEventListener('abort', () => (held.aborted = String(ctx.signal.reason)), { once: true });
        held.started.resolve();
        await Promise.race([held.release.promise, new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }))]);
        return { state: { opened: true } };
      },
    },
  },
};

interface Attempts {
  [key: string]: Json;
  answer: Json;
}

let failuresLeft = 0;
/** One safe outside call that fails `failuresLeft` times; each attempt announces itself with its number. */
const retried: Workflow<Attempts, null> = {
  name: 'test.retried',
  initial: () => ({ answer: null }),
  next: (s) => (s.answer !== null ? { end: 'completed', result: s.answer } : { phase: 'ask' }),
  phases: {
    ask: {
      async run(ctx) {
        const attempts: number[] = [];
        const answer = await ctx.calls.call('model', { safe: true, attempts: 3 }, async ({ attempt }) => {
          attempts.push(attempt);
          ctx.emit('model.started', null, { step: ctx.step, attempt });
          ctx.emit('text.delta', { text: `attempt ${attempt} partial` }, { step: ctx.step, attempt });
          if (failuresLeft-- > 0) throw new Error('stream dropped');
          return `answer of attempt ${attempt}`;
        });
        return { state: { answer } };
      },
    },
  },
};

describe('engine coordination', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(gate);
    t.engine.register(retried);
    t.engine.register(holder);
    await t.engine.start();
  });
  afterAll(async () => {
    await t.close();
  });

  it('[EXE-15] each cancel request gets its own cancel phase number and stored signal', async () => {
    const { executionId } = await t.engine.submit({ workflow: gate.name, input: null, scope: SERVICE });
    await waitForState(t.engine, executionId, ['waiting']);
    await t.engine.cancel(executionId);
    await t.engine.cancel(executionId);
    await waitForState(t.engine, executionId, ['cancelled']);
    const signals = await t.database.query<{ cancel_phase: number }>(
      `SELECT cancel_phase FROM execution_signals WHERE execution_id = $1 AND name = 'cancel' ORDER BY cancel_phase`,
      [executionId],
    );
    const phases = signals.map((s) => s.cancel_phase);
    expect(phases[0]).toBe(1);
    expect(new Set(phases).size).toBe(phases.length);
  });

  it('[EXE-15] a replayed cancel signal of an older phase is consumed unused by the running owner; the current phase’s signal cancels', async () => {
    held = { started: deferred(), release: deferred(), aborted: null };
    const { executionId } = await t.engine.submit({ workflow: holder.name, input: null, scope: SERVICE });
    await held.started.promise;
    // A stale cancel signal of phase 0 (older than any request) is replayed into the table and the
    // owner is told about it, as a cancel request would.
    const [stale] = await t.database.query<{ id: string }>(
      `INSERT INTO execution_signals (id, execution_id, name, cancel_phase) VALUES (gen_random_uuid(), $1, 'cancel', 0) RETURNING id`,
      [executionId],
    );
    await t.database.query(`SELECT pg_notify('openbot_signals', $1)`, [executionId]);
    // The owner has looked at it (a positive event): it is consumed, and the phase's gate is still open.
    await eventually(async () => {
      const [row] = await t.database.query<{ consumed: boolean }>('SELECT consumed_at IS NOT NULL AS consumed FROM execution_signals WHERE id = $1', [stale!.id]);
      return row?.consumed;
    }, 'the stale cancel signal to be consumed');
    expect(held.aborted).toBeNull();
    expect((await t.engine.get(executionId))?.state).toBe('running');

    // The signal of the current phase (a real request, phase 1) closes the gate.
    await t.engine.cancel(executionId);
    const ended = await waitForState(t.engine, executionId, ['completed', 'cancelled', 'failed']);
    expect(ended.state).toBe('cancelled');
    expect(held.aborted).toBe('cancel');
  });

  it('[CALL-04] a repeated request gets a new attempt and its own start event; texts of attempts are never joined', async () => {
    failuresLeft = 2;
    const { executionId } = await t.engine.submit({ workflow: retried.name, input: null, scope: SERVICE });
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    expect(await t.engine.result(executionId)).toBe('answer of attempt 3');
    const calls = await t.database.query<{ attempt: number; status: string; idempotency_key: string }>(
      'SELECT attempt, status, idempotency_key FROM execution_calls WHERE execution_id = $1 ORDER BY attempt',
      [executionId],
    );
    expect(calls.map((c) => [c.attempt, c.status])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
      [3, 'succeeded'],
    ]);
    expect(new Set(calls.map((c) => c.idempotency_key)).size).toBe(1);
    const events = [];
    for await (const e of t.engine.observe(executionId, 0, undefined, false)) events.push(e);
    const started = events.filter((e) => e.type === 'model.started').map((e) => e.attempt);
    expect(started).toEqual([1, 2, 3]);
    const texts = events.filter((e) => e.type === 'text.delta').map((e) => [e.attempt, e.text]);
    expect(texts).toEqual([
      [1, 'attempt 1 partial'],
      [2, 'attempt 2 partial'],
      [3, 'attempt 3 partial'],
    ]);
  });

  it('[REL-02] a node coordinates nothing outside executions: no schedules, no heartbeat writes to a waiting execution while it renews a running one', async () => {
    const { executionId } = await t.engine.submit({ workflow: gate.name, input: null, scope: SERVICE });
    await waitForState(t.engine, executionId, ['waiting']);
    const before = await t.database.query<{ xmin: string; updated_at: Date }>('SELECT xmin::text, updated_at FROM executions WHERE id = $1', [executionId]);
    // A running execution on the same node: its lease renewals show the heartbeat timer at work.
    held = { started: deferred(), release: deferred(), aborted: null };
    const running = await t.engine.submit({ workflow: holder.name, input: null, scope: SERVICE });
    await held.started.promise;
    const leaseOf = async () => (await t.database.query<{ lease_until: Date }>('SELECT lease_until FROM executions WHERE id = $1', [running.executionId]))[0]!.lease_until.getTime();
    const leases = new Set([await leaseOf()]);
    await eventually(async () => leases.add(await leaseOf()).size >= 3, 'two lease renewals of the running execution');
    // Every queue job of the waiting execution has run, its recovery job (2× lease after submit) included.
    await eventually(async () => {
      const jobs = await t.database.query<{ state: string; after_wait: boolean }>(
        `SELECT state, start_after > $2 AS after_wait FROM pgboss.job WHERE name = 'execution-advance' AND data->>'executionId' = $1::text`,
        [executionId, before[0]!.updated_at],
      );
      return jobs.some((j) => j.after_wait) && jobs.every((j) => j.state === 'completed');
    }, 'the recovery job of the waiting execution to run');
    const after = await t.database.query<{ xmin: string; updated_at: Date }>('SELECT xmin::text, updated_at FROM executions WHERE id = $1', [executionId]);
    expect(after).toEqual(before);
    const schedules = await t.database.query('SELECT name FROM pgboss.schedule');
    expect(schedules).toEqual([]);
    held.release.resolve();
    await t.engine.signal(executionId, 'go');
    await eventually(async () => (await t.engine.get(executionId))?.state === 'completed', 'completed');
    await waitForState(t.engine, running.executionId, ['completed']);
  });
});

import type { Json, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { eventually, SERVICE, waitForState } from './helpers';

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

  it('[EXE-15] a replayed old cancel signal cannot cancel a later phase: only a cancel request does', async () => {
    const { executionId } = await t.engine.submit({ workflow: gate.name, input: null, scope: SERVICE });
    await waitForState(t.engine, executionId, ['waiting']);
    // A stale cancel signal of phase 0 (no cancel was ever requested) is replayed into the table.
    await t.database.query(
      `INSERT INTO execution_signals (id, execution_id, name, cancel_phase) VALUES (gen_random_uuid(), $1, 'cancel', 0)`,
      [executionId],
    );
    expect(await t.engine.signal(executionId, 'go')).toBe(true);
    const ended = await waitForState(t.engine, executionId, ['completed', 'cancelled', 'failed']);
    expect(ended.state).toBe('completed');
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

  it('[REL-02] an idle node coordinates nothing: no schedules, no heartbeat writes to a waiting execution', async () => {
    const { executionId } = await t.engine.submit({ workflow: gate.name, input: null, scope: SERVICE });
    await waitForState(t.engine, executionId, ['waiting']);
    const before = await t.database.query<{ xmin: string; updated_at: Date }>('SELECT xmin::text, updated_at FROM executions WHERE id = $1', [executionId]);
    // Two full lease periods (the test engine's lease is 3 s): a heartbeat or sweep would have written.
    await new Promise((resolve) => setTimeout(resolve, 6_500));
    const after = await t.database.query<{ xmin: string; updated_at: Date }>('SELECT xmin::text, updated_at FROM executions WHERE id = $1', [executionId]);
    expect(after).toEqual(before);
    const schedules = await t.database.query('SELECT name FROM pgboss.schedule');
    expect(schedules).toEqual([]);
    await t.engine.signal(executionId, 'go');
    await eventually(async () => (await t.engine.get(executionId))?.state === 'completed', 'completed');
  });
});

import type { Json, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { SERVICE, twoSteps } from './helpers';

interface Last {
  [key: string]: Json;
  done: boolean;
  failEnd: boolean;
  failRelease: boolean;
}

/**
 * One phase whose checkpoint would carry a command (a row of its own) and an event, then an end
 * with end work: the end saves the phase's result (decision 048).
 */
const lastPhase: Workflow<Last, { failEnd: boolean; failRelease?: boolean }> = {
  name: 'test.last-phase',
  initial: ({ failEnd, failRelease }) => ({ done: false, failEnd, failRelease: failRelease === true }),
  next: (s) => (s.done ? { end: 'completed', result: 'ended' } : { phase: 'work' }),
  phases: {
    work: {
      async run(ctx) {
        ctx.commands.write('INSERT INTO last_phase_rows (execution_id, what) VALUES ($1, $2) ON CONFLICT DO NOTHING', [ctx.executionId, 'phase']);
        ctx.emit('probe.phase', { n: 1 });
        return { state: { ...ctx.state, done: true } };
      },
    },
  },
  async end({ executionId, state, outcome, tx }) {
    if (outcome !== 'completed') {
      // What a failed end releases (a pending send, held cleanups): its own row here.
      await tx.query('INSERT INTO last_phase_rows (execution_id, what) VALUES ($1, $2)', [executionId, `released:${outcome}`]);
      if (state.failRelease) throw new Error('release refused by the test');
      return;
    }
    await tx.query('INSERT INTO last_phase_rows (execution_id, what) VALUES ($1, $2)', [executionId, 'end']);
    if (state.failEnd) throw new Error('end work refused by the test');
  },
};

/** Two plain phases (no events, no commands) and a plain end: the end saves the last phase (decision 056). */
const plain = twoSteps('test.plain-last-phase');

describe('an end right after a phase', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
    await t.database.query('CREATE TABLE last_phase_rows (execution_id uuid NOT NULL, what text NOT NULL, PRIMARY KEY (execution_id, what))');
    t.engine.register(lastPhase as unknown as Workflow);
    t.engine.register(plain);
    await t.engine.start();
  });
  afterAll(async () => {
    await t.close();
  });

  const rowsOf = (id: string) =>
    t.database.query<{ what: string; tx: string }>('SELECT what, xmin::text AS tx FROM last_phase_rows WHERE execution_id = $1 ORDER BY what', [id]);

  it('[STC-01] saves the last phase’s command, its event and its step in the end’s own transaction', async () => {
    const { executionId } = await t.engine.submit({ workflow: lastPhase.name, input: { failEnd: false }, scope: SERVICE });
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    const rows = await rowsOf(executionId);
    expect(rows.map((r) => r.what)).toEqual(['end', 'phase']);
    const [execution] = await t.database.query<{ step: number; tx: string; state: string }>('SELECT step, state, xmin::text AS tx FROM executions WHERE id = $1', [executionId]);
    expect(execution).toMatchObject({ step: 1, state: 'completed' });
    // One transaction wrote the phase's command, the end work and the final state.
    expect(new Set([...rows.map((r) => r.tx), execution!.tx]).size).toBe(1);
    const events = await t.database.query<{ type: string }>('SELECT type FROM execution_events WHERE execution_id = $1 ORDER BY seq', [executionId]);
    expect(events.map((e) => e.type)).toEqual(['probe.phase', 'execution.ended']);
  });

  it('[ERR-01] end work that fails leaves the phase’s result saved once, by its checkpoint, and fails the execution with its cause; the feature’s end runs again for the failed outcome and releases what it holds', async () => {
    const { executionId } = await t.engine.submit({ workflow: lastPhase.name, input: { failEnd: true }, scope: SERVICE });
    expect(await t.engine.waitForEnd(executionId)).toBe('failed');
    // The end's transaction rolled back whole (its row with it); the checkpoint saved the phase's command; the failed end released.
    expect((await rowsOf(executionId)).map((r) => r.what)).toEqual(['phase', 'released:failed']);
    const [execution] = await t.database.query<{ step: number; error_id: string | null }>('SELECT step, error_id FROM executions WHERE id = $1', [executionId]);
    expect(execution!.step).toBe(1);
    expect(execution!.error_id).not.toBeNull();
    const events = await t.database.query<{ type: string }>('SELECT type FROM execution_events WHERE execution_id = $1 ORDER BY seq', [executionId]);
    expect(events.map((e) => e.type)).toEqual(['probe.phase', 'execution.ended']);
  });

  it('[ERR-01] when the feature’s end fails for the failed outcome too, the execution still ends failed, without its end work', async () => {
    const { executionId } = await t.engine.submit({ workflow: lastPhase.name, input: { failEnd: true, failRelease: true }, scope: SERVICE });
    expect(await t.engine.waitForEnd(executionId)).toBe('failed');
    expect((await rowsOf(executionId)).map((r) => r.what)).toEqual(['phase']);
    const events = await t.database.query<{ type: string }>('SELECT type FROM execution_events WHERE execution_id = $1 ORDER BY seq', [executionId]);
    expect(events.map((e) => e.type)).toEqual(['probe.phase', 'execution.ended']);
  });

  it('[STC-01] saves a plain last phase’s result with the one-statement end: when that phase’s result commits, the execution has ended with it', async () => {
    // Recorded for every execution (the run may reach its first checkpoint before submit answers), kept for this one below.
    const seen: Array<{ id: string; step: number; state: string }> = [];
    t.faults.arm(
      'checkpoint.committed',
      {
        kind: 'call',
        run: async (c) => {
          const [row] = await t.database.query<{ step: number; state: string }>('SELECT step, state FROM executions WHERE id = $1', [c.executionId]);
          seen.push({ id: c.executionId, ...row! });
        },
      },
      { times: 2 },
    );
    const target = (await t.engine.submit({ workflow: plain.name, input: null, scope: SERVICE })).executionId;
    expect(await t.engine.waitForEnd(target)).toBe('completed');
    // The first phase's checkpoint leaves the execution running; the second phase's result and
    // the end are one update, so the row is never at step 2 and still running.
    expect(seen).toEqual([
      { id: target, step: 1, state: 'running' },
      { id: target, step: 2, state: 'completed' },
    ]);
    expect(await t.engine.result(target)).toBe(2);
  });
});

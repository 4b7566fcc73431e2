import type { Json, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { SERVICE } from './helpers';

interface Last {
  [key: string]: Json;
  done: boolean;
  failEnd: boolean;
}

/**
 * One phase whose checkpoint would carry a command (a row of its own) and an event, then an end
 * with end work: the end saves the phase's result (decision 048).
 */
const lastPhase: Workflow<Last, { failEnd: boolean }> = {
  name: 'test.last-phase',
  initial: ({ failEnd }) => ({ done: false, failEnd }),
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
    if (outcome !== 'completed') return;
    await tx.query('INSERT INTO last_phase_rows (execution_id, what) VALUES ($1, $2)', [executionId, 'end']);
    if (state.failEnd) throw new Error('end work refused by the test');
  },
};

describe('an end right after a phase', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
    await t.database.query('CREATE TABLE last_phase_rows (execution_id uuid NOT NULL, what text NOT NULL, PRIMARY KEY (execution_id, what))');
    t.engine.register(lastPhase as unknown as Workflow);
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

  it('[ERR-01] end work that fails leaves the phase’s result saved once, by its checkpoint, and fails the execution with its cause', async () => {
    const { executionId } = await t.engine.submit({ workflow: lastPhase.name, input: { failEnd: true }, scope: SERVICE });
    expect(await t.engine.waitForEnd(executionId)).toBe('failed');
    // The end's transaction rolled back whole (its row with it); the checkpoint saved the phase's command.
    expect((await rowsOf(executionId)).map((r) => r.what)).toEqual(['phase']);
    const [execution] = await t.database.query<{ step: number; error_id: string | null }>('SELECT step, error_id FROM executions WHERE id = $1', [executionId]);
    expect(execution!.step).toBe(1);
    expect(execution!.error_id).not.toBeNull();
    const events = await t.database.query<{ type: string }>('SELECT type FROM execution_events WHERE execution_id = $1 ORDER BY seq', [executionId]);
    expect(events.map((e) => e.type)).toEqual(['probe.phase', 'execution.ended']);
  });
});

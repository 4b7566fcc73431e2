import type { Json, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { SERVICE, waitForState } from './helpers';

interface Plan {
  [key: string]: Json;
  /** How many release attempts fail before the resource lets go. */
  releaseFailures: number;
  /** Whether the phase itself fails too (its failure comes first). */
  phaseFails: boolean;
}

const attemptsByExecution = new Map<string, number[]>();

const releasing: Workflow<Plan & { done: boolean }, Plan> = {
  name: 'test.releasing',
  initial: (plan) => ({ ...plan, done: false }),
  next: (s) => (s.done ? { end: 'completed' } : { phase: 'work' }),
  phases: {
    work: {
      async run(ctx) {
        const times: number[] = [];
        attemptsByExecution.set(ctx.executionId, times);
        let failures = ctx.state.releaseFailures;
        ctx.resources.defer(() => {
          times.push(Date.now());
          if (failures-- > 0) throw new Error(`release failed: secret-release-cause`);
        });
        if (ctx.state.phaseFails) throw new Error('the phase failed first');
        return { state: { ...ctx.state, done: true } };
      },
    },
  },
};

describe('releasing resources', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(releasing);
    await t.engine.start();
  });
  afterAll(async () => {
    await t.close();
  });

  it('[ERR-04] release retries back off from 100 ms upwards, and a release that recovers completes the phase', async () => {
    const { executionId } = await t.engine.submit({ workflow: releasing.name, input: { releaseFailures: 3, phaseFails: false }, scope: SERVICE });
    const view = await waitForState(t.engine, executionId, ['completed', 'failed']);
    expect(view.state).toBe('completed');
    const times = attemptsByExecution.get(executionId)!;
    expect(times).toHaveLength(4);
    const gaps = times.slice(1).map((at, i) => at - times[i]!);
    // About 100, 200, 400 ms apart (with a little slack for timer granularity).
    expect(gaps[0]).toBeGreaterThanOrEqual(90);
    expect(gaps[1]).toBeGreaterThanOrEqual(180);
    expect(gaps[2]).toBeGreaterThanOrEqual(360);
  });

  it('[ERR-04] a later release failure gets its own sealed error record linked to the execution; the first failure stays the execution’s', async () => {
    const { executionId } = await t.engine.submit({ workflow: releasing.name, input: { releaseFailures: 99, phaseFails: true }, scope: SERVICE });
    const view = await waitForState(t.engine, executionId, ['completed', 'failed']);
    expect(view.state).toBe('failed');
    const records = await t.database.query<{ id: string; origin: string; cause_id: string }>(
      'SELECT id, origin, cause_id FROM error_records WHERE execution_id = $1 ORDER BY origin',
      [executionId],
    );
    expect(records).toHaveLength(2);
    const first = records.find((r) => r.id === view.errorId);
    const later = records.find((r) => r.id !== view.errorId);
    expect(first?.origin).toMatch(/^execution /);
    expect(later?.origin).toMatch(/^release /);
    const [sealed] = await t.database.query<{ data: Buffer }>('SELECT data FROM sealed_records WHERE id = $1', [later!.cause_id]);
    expect(sealed!.data.toString('latin1')).not.toContain('secret-release-cause');
    const ended = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM execution_events WHERE execution_id = $1 AND type = 'execution.ended'`, [executionId]);
    expect(ended[0]!.n).toBe(1);
  });
});

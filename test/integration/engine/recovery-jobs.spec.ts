import { type Json, type Workflow } from '@openbot/engine';
import { withTransaction } from '@openbot/engine/node';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { SERVICE } from './helpers';

const idle: Workflow<{ [key: string]: Json; done: boolean }, null> = {
  name: 'test.idle',
  initial: () => ({ done: false }),
  next: (s) => (s.done ? { end: 'completed' } : { phase: 'work' }),
  phases: { work: { run: async ({ state }) => ({ state: { ...state, done: true } }) } },
};

describe('recovery jobs', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(idle);
    await t.engine.start();
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['without a command key (job and row in one statement)', undefined],
    ['with a command key (job in the submit transaction)', 'key-1'],
  ])('[EXE-08] a submitted execution %s has its recovery job, due after twice the lease', async (_label, commandKey) => {
    const { executionId } = await t.engine.submit({ workflow: idle.name, input: null, scope: SERVICE, ...(commandKey ? { commandKey } : {}) });
    const jobs = await t.database.query<{ due_in: number }>(
      `SELECT EXTRACT(EPOCH FROM start_after - created_on)::float8 AS due_in FROM pgboss.job
        WHERE name = 'execution-advance' AND data->>'executionId' = $1`,
      [executionId],
    );
    expect(jobs.length).toBeGreaterThanOrEqual(1);
    // The lease of the test engine is 3 s: the job is due about 6 s after it was written.
    expect(Math.max(...jobs.map((j) => j.due_in))).toBeGreaterThanOrEqual(5);
  });

  async function jobsOf(executionId: string): Promise<number> {
    const rows = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'execution-advance' AND data->>'executionId' = $1`, [executionId]);
    return rows[0]!.n;
  }

  it('[EXE-08] a recovery job commits with its execution: a submit inside a transaction that rolls back leaves neither row nor job', async () => {
    let executionId = '';
    await expect(
      withTransaction(t.pool, async (tx) => {
        executionId = await t.engine.in(tx).submit({ workflow: idle.name, input: null, scope: SERVICE });
        throw new Error('the feature refused after the submit');
      }),
    ).rejects.toThrow('the feature refused after the submit');
    expect(executionId).not.toBe('');
    expect(await t.database.query('SELECT id FROM executions WHERE id = $1', [executionId])).toEqual([]);
    expect(await jobsOf(executionId)).toBe(0);

    // The same submit committed: both are there, the job due after twice the lease.
    const committed = await withTransaction(t.pool, (tx) => t.engine.in(tx).submit({ workflow: idle.name, input: null, scope: SERVICE }));
    expect(await t.database.query('SELECT id FROM executions WHERE id = $1', [committed])).toHaveLength(1);
    expect(await jobsOf(committed)).toBe(1);
    expect(await t.engine.waitForEnd(committed)).toBe('completed');
  });

  it('[EXE-08] a submit in a transaction answers once its insert is sent: the COMMIT written right behind it keeps row and job, and a failure beside it leaves neither', async () => {
    // Nothing else is sent: the COMMIT goes out right behind the insert, before its answer.
    const sent = await withTransaction(t.pool, (tx) => t.engine.in(tx).submit({ workflow: idle.name, input: null, scope: SERVICE }));
    expect(await t.database.query('SELECT id FROM executions WHERE id = $1', [sent])).toHaveLength(1);
    expect(await jobsOf(sent)).toBe(1);
    expect(await t.engine.waitForEnd(sent)).toBe('completed');

    // Sent after the work returned, the insert would run after the COMMIT, outside the block, and be kept.
    let executionId = '';
    await expect(
      withTransaction(t.pool, async (tx) => {
        executionId = await t.engine.in(tx).submit({ workflow: idle.name, input: null, scope: SERVICE });
        tx.commitBehind(tx.query('SELECT 1 / 0'));
      }),
    ).rejects.toMatchObject({ code: '22012' });
    expect(await t.database.query('SELECT id FROM executions WHERE id = $1', [executionId])).toEqual([]);
    expect(await jobsOf(executionId)).toBe(0);
  });
});

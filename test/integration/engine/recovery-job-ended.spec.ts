import { ADVANCE_QUEUE } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { eventually, onePhase, poolStatements, SERVICE, waitForState } from './helpers';

const quick = onePhase('test.recovery-after-end', 'work', () => Promise.resolve());

/**
 * Every run this node starts has a recovery job, due when its lease would have run out twice;
 * most come due after their execution ended. Such a job is answered by a plain read: no claim
 * transaction, no row lock (a WAL record and a flush each).
 */
describe('engine: a recovery job that finds its execution ended', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine({ pollingSeconds: 0.5 });
    t.engine.register(quick);
    await t.engine.start();
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t.close();
  });

  it('completes with a plain read of the state, and does not lock the row to claim it', async () => {
    const { executionId } = await t.engine.submit({ workflow: quick.name, input: null, scope: SERVICE });
    await waitForState(t.engine, executionId, ['completed']);
    const statements = poolStatements(t.pool, executionId);
    // A row lock leaves its transaction in the row's xmax.
    const xmax = async () => (await t.database.query<{ xmax: string }>(`SELECT xmax::text FROM executions WHERE id = $1`, [executionId]))[0]!.xmax;
    const before = await xmax();
    // The recovery job comes due now instead of in twice the lease.
    const due = await t.database.query<{ id: string }>(
      `UPDATE pgboss.job SET start_after = now() WHERE name = $1 AND data->>'executionId' = $2::text AND state = 'created' RETURNING id`,
      [ADVANCE_QUEUE, executionId],
    );
    expect(due).toHaveLength(1);
    await eventually(
      async () => (await t.database.query<{ state: string }>(`SELECT state FROM pgboss.job WHERE id = $1`, [due[0]!.id]))[0]?.state === 'completed',
      'the recovery job to complete',
    );
    expect(statements()).toEqual(['engine.has_ended']);
    expect(await xmax()).toBe(before);
    expect(await t.engine.get(executionId)).toMatchObject({ state: 'completed', generation: 1 });
    jest.restoreAllMocks();
  });
});

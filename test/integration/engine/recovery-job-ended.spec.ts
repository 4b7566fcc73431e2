import { ADVANCE_QUEUE } from '@openbot/engine/node';
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

  it('completes with a plain read of the state, one for a batch of jobs, and does not lock the rows to claim them', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await t.engine.submit({ workflow: quick.name, input: null, scope: SERVICE })).executionId);
    for (const id of ids) await waitForState(t.engine, id, ['completed']);
    const statements = ids.map((id) => poolStatements(t.pool, id));
    // A row lock leaves its transaction in the row's xmax.
    const xmax = async () => (await t.database.query<{ xmax: string }>(`SELECT xmax::text FROM executions WHERE id = ANY($1::uuid[]) ORDER BY id`, [ids])).map((r) => r.xmax);
    const before = await xmax();
    // The recovery jobs come due now instead of in twice the lease, together: one fetch takes them all.
    const due = await t.database.query<{ id: string }>(
      `UPDATE pgboss.job SET start_after = now() WHERE name = $1 AND data->>'executionId' = ANY($2::text[]) AND state = 'created' RETURNING id`,
      [ADVANCE_QUEUE, ids],
    );
    expect(due).toHaveLength(3);
    await eventually(
      async () => (await t.database.query(`SELECT 1 FROM pgboss.job WHERE id = ANY($1::uuid[]) AND state = 'completed'`, [due.map((d) => d.id)])).length === 3,
      'the recovery jobs to complete',
    );
    // One read named every execution of the batch; nothing else touched them.
    for (const read of statements) expect(read()).toEqual(['engine.ended_among']);
    const reads = jest.mocked(t.pool.query).mock.calls.map(([config]) => config as unknown as { name?: string; values?: unknown[] });
    const batch = reads.filter((c) => c.name === 'engine.ended_among' && ids.every((id) => (c.values?.[0] as string[]).includes(id)));
    expect(batch).toHaveLength(1);
    expect(await xmax()).toEqual(before);
    for (const id of ids) expect(await t.engine.get(id)).toMatchObject({ state: 'completed', generation: 1 });
    jest.restoreAllMocks();
  });
});

import { createTestDatabase } from '../../support/test-database';
import { calls, Counter, FINAL, killedByFault, startNode, twoProcessSuite, waitForStates } from './harness';

/**
 * A call that failed for good, then a kill -9 of its owner before the failed end committed: the
 * new owner must end with that failure (its error ID on the call row), never send the call again.
 * Workflow `rel.steps` (engine-node.ts): phase 3 makes an unsafe call, which the counter refuses.
 */

jest.setTimeout(30_000);

const counter = new Counter();
const databases = twoProcessSuite(counter);


describe('engine: a failed call across a kill of its owner', () => {
  it('[ERR-01][CALL-03] A is killed right after saving that the unsafe step-3 call failed for good; B ends the execution failed with that error ID and requests step 3 no more', async () => {
    const db = await createTestDatabase();
    databases.push(db);
    counter.refusing = (call) => call.step === 3;
    const [b, a] = await Promise.all([
      startNode({ databaseUrl: db.url, nodeId: 'node-b', counterUrl: counter.url }),
      startNode({ databaseUrl: db.url, nodeId: 'node-a', counterUrl: counter.url, faults: 'call.failed.committed=kill@step:3', submit: 1 }),
    ]);
    const [id] = await a.waitSubmitted(1);
    await killedByFault(a);

    const [ended] = await waitForStates(db.query, [id!], FINAL, 15_000, [b]);
    expect(ended).toMatchObject({ state: 'failed', generation: 2, owner_node: 'node-b' });
    expect(counter.of(id!, 3).map((c) => [c.generation, c.node])).toEqual([[1, 'node-a']]);
    const [row] = await db.query<{ error_id: string; category: string }>('SELECT error_id, category FROM executions WHERE id = $1', [id]);
    const step3 = await db.query<{ status: string; error_id: string; generation: number }>(`SELECT status, error_id, generation FROM execution_calls WHERE execution_id = $1 AND step = 3`, [id]);
    expect(step3).toEqual([{ status: 'failed', error_id: row!.error_id, generation: 1 }]);
    expect((await calls(db.query, id!)).filter((c) => c.step === 3)).toHaveLength(1);
    const records = await db.query<{ id: string }>('SELECT id FROM error_records WHERE execution_id = $1', [id]);
    expect(records.map((r) => r.id)).toEqual([row!.error_id]);
    counter.refusing = null;
    b.kill('SIGTERM');
    expect(await b.exited).toEqual({ code: 0, signal: null });
  });
});

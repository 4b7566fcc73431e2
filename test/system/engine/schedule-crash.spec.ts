import { createTestDatabase } from '../../support/test-database';
import { Counter, executions, killedByFault, startNode, twoProcessSuite, waitUntil } from './harness';

/**
 * A schedule firing every second on two real processes; the node that fires first is killed -9
 * right after its fire rows and executions commit, before it runs them. Workflow `rel.steps`
 * (engine-node.ts) with one unsafe call per execution: the counter flags any second request.
 */

jest.setTimeout(40_000);

const counter = new Counter();
const databases = twoProcessSuite(counter);


describe('engine: schedules across a kill of the firing node', () => {
  it('[STC-01][REL-01] A is killed right after committing a fire, before running it; B, started later, runs that execution once and then fires each second once', async () => {
    const db = await createTestDatabase();
    databases.push(db);
    // A alone first, so the first fire is surely A's: the fault kills it right after that commit.
    const a = await startNode({ databaseUrl: db.url, nodeId: 'node-a', counterUrl: counter.url, schedule: '* * * * * *', schedulePollMs: 100, faults: 'schedule.fired.committed=kill' });
    await killedByFault(a);
    const [first] = await db.query<{ execution_id: string }>('SELECT execution_id FROM schedule_fires');
    const [left] = await executions(db.query, [first!.execution_id]);
    expect(left).toMatchObject({ state: 'queued', owner_node: null });
    const b = await startNode({ databaseUrl: db.url, nodeId: 'node-b', counterUrl: counter.url, schedulePollMs: 100 });

    const fires = await waitUntil(
      async () => {
        const rows = await db.query<{ fire_at: Date; execution_id: string }>('SELECT fire_at, execution_id FROM schedule_fires ORDER BY fire_at');
        return rows.length >= 4 ? rows : undefined;
      },
      20_000,
      () => 'four fires of the schedule',
    );
    await db.query(`DELETE FROM schedules WHERE name = 'rel.schedule'`);
    const ids = fires.map((f) => f.execution_id);
    const ended = await waitUntil(
      async () => {
        const rows = await executions(db.query, ids);
        return rows.length === ids.length && rows.every((r) => r.state === 'completed') ? rows : undefined;
      },
      20_000,
      () => 'every fired execution to complete',
    );
    // A's fire was run by B (A died before running it); each execution called the counter once.
    expect(ended.find((r) => r.id === ids[0])).toMatchObject({ owner_node: 'node-b' });
    for (const id of ids) expect(counter.of(id)).toHaveLength(1);
    // After A's fire: the seconds while no node ran are skipped (policy skip, only the latest one
    // within the misfire threshold runs); from B's first fire on, one fire per second, none twice.
    const seconds = fires.slice(1).map((f) => f.fire_at.getTime() / 1000);
    expect(seconds.every((s, i) => i === 0 || s === seconds[i - 1]! + 1)).toBe(true);
    expect(seconds[0]).toBeGreaterThan(fires[0]!.fire_at.getTime() / 1000);
    b.kill('SIGTERM');
    expect(await b.exited).toEqual({ code: 0, signal: null });
  });
});

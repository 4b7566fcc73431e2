import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { Counter, executions, FINAL, killAllNodes, openExecutionData, startNode, waitForStates, type EngineNode } from './harness';

/**
 * The engine's primitives across a real kill of the owner (primitive-workflows.ts): a signal read
 * by a running phase, that phase's command to another execution, and a wait on another
 * execution's end. Lease 2 s; pg-boss polls every 0.5 s.
 */

jest.setTimeout(40_000);

const counter = new Counter();
let db: TestDatabase;

beforeAll(async () => {
  await counter.start();
  db = await createTestDatabase();
});

afterAll(async () => {
  await killAllNodes();
  await counter.close();
  await db?.drop().catch(() => undefined);
});

async function submitWork(node: EngineNode, workflow: string, input: Record<string, unknown>): Promise<string> {
  node.send({ submitWork: { workflow, input } });
  // Each node submits each workflow once here: its line is the one answer.
  const line = await node.line((l) => l.workflow === workflow && typeof l.submittedWork === 'string');
  return line.submittedWork as string;
}

function resultOf(row: { id: string; key_id: string; data: Buffer }): unknown {
  return openExecutionData(row.id, row.key_id, row.data).result;
}

describe('engine primitives with real processes', () => {
  it('[EXE-08][STC-01][EXE-14] A reads a steering signal and issues a cancel, and is killed before its checkpoint: B reads the signal again, commits the cancel once, and the cancelled execution\'s end wakes its waiter', async () => {
    const b = await startNode({ databaseUrl: db.url, nodeId: 'node-b', counterUrl: counter.url });
    const a = await startNode({ databaseUrl: db.url, nodeId: 'node-a', counterUrl: counter.url, faults: 'checkpoint.before-commit=kill@step:1' });

    // T runs on B, in its inbox; W waits (on nobody's lease) for T's end; X runs on A.
    const target = await submitWork(b, 'rel.inbox', {});
    const waiter = await submitWork(b, 'rel.await', { targets: [target] });
    await waitForStates(db.query, [waiter], ['waiting'], 15_000, [b]);
    const commander = await submitWork(a, 'rel.inbox', { cancel: target });
    await waitForStates(db.query, [commander, target], ['running'], 15_000, [a, b]);

    b.send({ signal: { id: commander, name: 'steer', payload: 'approve' } });
    // A reads it, issues the cancel of T, and dies at its checkpoint: nothing of it committed.
    const exit = await a.exited;
    expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
    const [leftT] = await executions(db.query, [target]);
    expect(leftT).toMatchObject({ state: 'running' });
    expect(await db.query(`SELECT name FROM execution_signals WHERE execution_id = $1 AND consumed_at IS NULL`, [commander])).toEqual([{ name: 'steer' }]);

    // B takes X over after A's lease: it reads the same signal, and its checkpoint commits the cancel.
    const [doneX, doneT, doneW] = await waitForStates(db.query, [commander, target, waiter], FINAL, 30_000, [b]).then((rows) =>
      [commander, target, waiter].map((id) => rows.find((r) => r.id === id)!),
    );
    expect(doneX).toMatchObject({ state: 'completed', generation: 2, owner_node: 'node-b' });
    expect(resultOf(doneX!)).toEqual({ read: ['approve'] });
    expect(doneT).toMatchObject({ state: 'cancelled' });
    expect(await db.query(`SELECT count(*)::int AS n FROM execution_signals WHERE execution_id = $1 AND name = 'cancel'`, [target])).toEqual([{ n: 1 }]);
    expect(doneW).toMatchObject({ state: 'completed' });
    expect(resultOf(doneW!)).toEqual({ ended: [{ executionId: target, state: 'cancelled' }] });
    // The waiter never polled.
    expect(await db.query(`SELECT count(*)::int AS n FROM execution_timers WHERE execution_id = $1`, [waiter])).toEqual([{ n: 0 }]);
    b.kill('SIGTERM');
    expect(await b.exited).toEqual({ code: 0, signal: null });
  });

  it('[TASK-02][EXE-08] a pause of an execution whose owner was killed is kept: the next owner parks it instead of running it; resume continues it from its saved state', async () => {
    const b = await startNode({ databaseUrl: db.url, nodeId: 'node-b2', counterUrl: counter.url });
    const a = await startNode({ databaseUrl: db.url, nodeId: 'node-a2', counterUrl: counter.url, faults: 'phase.started=kill@step:1' });
    a.send({ submitWork: { workflow: 'rel.inbox', input: {} } });
    // A dies as its phase starts (maybe before it printed the ID): the row tells which it was.
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const [{ id }] = (await db.query<{ id: string }>(`SELECT id FROM executions WHERE owner_node = 'node-a2'`)) as [{ id: string }];
    // Nobody runs it: the pause is only a flag until someone claims it.
    b.send({ pause: id });
    expect(await b.line((l) => l.pausedId === id)).toMatchObject({ state: 'running', paused: true });

    // B's claim after A's lease parks it (generation 2): waiting, paused, nothing run.
    const [parked] = await waitForStates(db.query, [id], ['waiting'], 20_000, [b]);
    expect(parked).toMatchObject({ generation: 2, owner_node: 'node-b2', step: 0 });
    b.send({ signal: { id, name: 'steer', payload: 'go on' } });
    await b.line((l) => l.signalled === id);
    expect(await executions(db.query, [id])).toMatchObject([{ state: 'waiting', generation: 2 }]);

    b.send({ resume: id });
    expect(await b.line((l) => l.resumedId === id)).toMatchObject({ state: 'queued', resumed: true });
    const [done] = await waitForStates(db.query, [id], FINAL, 20_000, [b]);
    expect(done).toMatchObject({ state: 'completed', generation: 3 });
    expect(resultOf(done!)).toEqual({ read: ['go on'] });
    b.kill('SIGTERM');
    expect(await b.exited).toEqual({ code: 0, signal: null });
  });
});

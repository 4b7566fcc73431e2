import { createDataSource } from '@openbot/features';
import { EmbeddedPostgres, migrate } from '@openbot/platform';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { MIGRATIONS } from '../../../migrations';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import {
  calls,
  checkCompleted,
  Counter,
  events,
  executions,
  FINAL,
  killedByFault,
  openExecutionData,
  startNode,
  twoProcessSuite,
  waitForStates,
  waitUntil,
  type EngineNode,
} from './harness';

/**
 * Real processes on one PostgreSQL (REL-01, docs/architecture.md "Crash tests"): an
 * owner is killed at a named fault point (`OPENBOT_FAULTS`), its database connections are
 * terminated, or the database itself restarts; another process recovers from the saved steps.
 * The outside service counts every request and records a violation when an unsafe step is
 * requested twice for one execution.
 *
 * Timing: lease 2 s (renewed every 0.67 s); a submit arms a recovery job 2×lease later; pg-boss
 * polls every 0.5 s. Workflow `rel.steps` (engine-node.ts): phase n calls the service once
 * through the call log, odd phases unsafe, even phases safe; one `rel.step` event per phase.
 */

jest.setTimeout(30_000);

const K = 5;
const counter = new Counter();
// Every test fails on a second request of an unsafe step (or a safe repeat under a new key).
const databases = twoProcessSuite(counter);
let restartCluster: { current: EmbeddedPostgres | null; dir: string } | null = null;

async function database(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  databases.push(db);
  return db;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}


afterAll(async () => {
  if (restartCluster) {
    await restartCluster.current?.stop().catch(() => undefined);
    await rm(restartCluster.dir, { recursive: true, force: true });
  }
});

/** B finished the execution A left after step 3: steps 1-3 reused, 4 and 5 run once each under generation 2. */
async function finishesFromSavedSteps(db: TestDatabase, id: string, b: EngineNode): Promise<void> {
  const [done] = await waitForStates(db.query, [id], FINAL, 15_000, [b]);
  expect(done).toMatchObject({ generation: 2, owner_node: 'node-b', step: K });
  await checkCompleted(db.query, counter, done!, K);
  expect(counter.of(id).map((c) => [c.step, c.generation, c.node])).toEqual([
    [1, 1, 'node-a'],
    [2, 1, 'node-a'],
    [3, 1, 'node-a'],
    [4, 2, 'node-b'],
    [5, 2, 'node-b'],
  ]);
  b.kill('SIGTERM');
  expect(await b.exited).toEqual({ code: 0, signal: null });
}

describe('engine crash recovery with real processes', () => {
  it('[REL-01][EXE-03][EXE-10] (lease expiry, dead-node detection off) A is killed right after its step-3 checkpoint while running alone past 2×lease; B, started later, takes over with generation 2 and finishes from the saved steps', async () => {
    const db = await database();
    // A runs slowly (1.6 s per phase), so its own worker has fetched the recovery job (due 4 s
    // after the submit, polled every 0.5 s) before A dies at ~4.9 s; no other node is running.
    const a = await startNode({ databaseUrl: db.url, nodeId: 'node-a', counterUrl: counter.url, faults: 'checkpoint.committed=kill@step:3', submit: 1, stepDelayMs: 1_600, deadNodes: false });
    const [id] = await a.waitSubmitted(1);
    await killedByFault(a);
    const [left] = await executions(db.query, [id!]);
    expect(left).toMatchObject({ state: 'running', generation: 1, step: 3, owner_node: 'node-a' });
    expect(counter.of(id!).map((c) => c.step)).toEqual([1, 2, 3]);

    const b = await startNode({ databaseUrl: db.url, nodeId: 'node-b', counterUrl: counter.url, deadNodes: false });
    await finishesFromSavedSteps(db, id!, b);
  });

  it('[REL-01][EXE-03][EXE-10] (dead-node detection) A is killed right after its step-3 checkpoint while B runs beside it; leases of 60 s cannot run out, yet B takes over with generation 2 within seconds and finishes from the saved steps', async () => {
    const db = await database();
    const b = await startNode({ databaseUrl: db.url, nodeId: 'node-b', counterUrl: counter.url, leaseSeconds: 60 });
    const a = await startNode({ databaseUrl: db.url, nodeId: 'node-a', counterUrl: counter.url, faults: 'checkpoint.committed=kill@step:3', submit: 1, leaseSeconds: 60 });
    const [id] = await a.waitSubmitted(1);
    await killedByFault(a);
    // A's lease (60 s) is still valid: only the presence lock PostgreSQL dropped with A's connection says A is gone.
    const [left] = await db.query<{ lease_valid: boolean }>(`SELECT lease_until > now() + interval '30 seconds' AS lease_valid FROM executions WHERE id = $1`, [id]);
    expect(left!.lease_valid).toBe(true);
    await finishesFromSavedSteps(db, id!, b);
  });

  it('[REL-01][CALL-03] A is killed after marking the unsafe step-3 call sending; B waits in outcome_unknown without requesting it again; a decided result completes it without a request', async () => {
    const db = await database();
    const [b, a] = await Promise.all([
      startNode({ databaseUrl: db.url, nodeId: 'node-b', counterUrl: counter.url }),
      startNode({ databaseUrl: db.url, nodeId: 'node-a', counterUrl: counter.url, faults: 'call.sending.committed=kill@step:3', submit: 1 }),
    ]);
    const [id] = await a.waitSubmitted(1);
    await killedByFault(a);

    const [unknown] = await waitForStates(db.query, [id!], ['outcome_unknown', ...FINAL], 15_000, [b]);
    expect(unknown).toMatchObject({ state: 'outcome_unknown', generation: 2, owner_node: 'node-b', step: 2 });
    expect(counter.of(id!, 3)).toEqual([]);
    const log = await calls(db.query, id!);
    expect(log.filter((c) => c.step === 3).map((c) => [c.status, c.generation, c.safe])).toEqual([['unknown', 1, false]]);
    const before = await events(db.query, id!);
    expect(before.map((e) => [e.seq, e.type, e.step])).toEqual([
      [1, 'rel.step', 1],
      [2, 'rel.step', 2],
      [3, 'execution.outcome_unknown', null],
    ]);

    // An operator saves the result the provider reported: it is reused, never re-requested.
    b.send({ decide: { id, decision: 'succeeded', result: { step: 3, token: 'operator' } } });
    await b.line((l) => l.decided === id);
    const [done] = await waitForStates(db.query, [id!], FINAL, 15_000, [b]);
    // The decision queues the execution; its next claim is one more takeover.
    expect(done).toMatchObject({ generation: 3, owner_node: 'node-b' });
    await checkCompleted(db.query, counter, done!, K);
    expect(counter.of(id!, 3)).toEqual([]);
    expect(counter.of(id!).map((c) => c.step)).toEqual([1, 2, 4, 5]);
  });

  it('[REL-01][EXE-10][CALL-05] A is killed after saving the unsafe step-3 result, before its checkpoint; B reuses that result and requests step 3 no more', async () => {
    const db = await database();
    const [b, a] = await Promise.all([
      startNode({ databaseUrl: db.url, nodeId: 'node-b', counterUrl: counter.url }),
      startNode({ databaseUrl: db.url, nodeId: 'node-a', counterUrl: counter.url, faults: 'call.result.committed=kill@step:3', submit: 1 }),
    ]);
    const [id] = await a.waitSubmitted(1);
    await killedByFault(a);
    const [left] = await executions(db.query, [id!]);
    expect(left).toMatchObject({ state: 'running', generation: 1, step: 2 });

    const [done] = await waitForStates(db.query, [id!], FINAL, 15_000, [b]);
    expect(done).toMatchObject({ generation: 2, owner_node: 'node-b' });
    await checkCompleted(db.query, counter, done!, K);
    expect(counter.of(id!, 3).map((c) => [c.generation, c.node])).toEqual([[1, 'node-a']]);
    const step3 = (await calls(db.query, id!)).filter((c) => c.step === 3);
    expect(step3.map((c) => [c.status, c.generation])).toEqual([['succeeded', 1]]);
    expect(b.exit).toBeNull();
  });

  it('[CALL-05][EXE-04] (lease expiry as the fallback: a frozen owner still holds its presence lock) an owner frozen mid-call loses its lease; B takes over and completes; the resumed old owner stores its late result in the call log but changes no state and publishes nothing', async () => {
    const db = await database();
    const held = counter.hold((c) => c.node === 'node-a' && c.step === 2);
    const [a, b] = await Promise.all([
      startNode({ databaseUrl: db.url, nodeId: 'node-a', counterUrl: counter.url, submit: 1 }),
      startNode({ databaseUrl: db.url, nodeId: 'node-b', counterUrl: counter.url }),
    ]);
    // The safe step-2 request reached the provider; A freezes (SIGSTOP) before the reply arrives.
    await held.arrived;
    a.child.kill('SIGSTOP');
    const [id] = await a.waitSubmitted(1);

    const [done] = await waitForStates(db.query, [id!], FINAL, 15_000, [b]);
    expect(done).toMatchObject({ generation: 2, owner_node: 'node-b', step: K });
    const eventsBefore = await events(db.query, id!);
    // B closed A's open attempt (it may still answer) and saved its own.
    expect((await calls(db.query, id!)).filter((c) => c.step === 2).map((c) => [c.attempt, c.generation, c.status])).toEqual([
      [1, 1, 'failed'],
      [2, 2, 'succeeded'],
    ]);

    // The reply is sent, then A wakes up with a lease it no longer holds. B has ended the
    // execution, so A's runner does not close A's gate (there is nothing left to protect): A reads
    // the reply that is already waiting and saves it. The late result always arrives.
    held.release();
    a.child.kill('SIGCONT');
    // A's run ends (its checkpoint is fenced): from then on it can write nothing more.
    a.send({ whenRunsEnd: true });
    await a.line((l) => l.runsEnded === 'node-a');
    // The late result is kept in the call log (CALL-05), under A's generation and attempt.
    const step2 = await db.query<{ attempt: number; generation: number; status: string; has_result: boolean }>(
      `SELECT attempt, generation, status, result IS NOT NULL AS has_result FROM execution_calls
        WHERE execution_id = $1 AND step = 2 ORDER BY attempt`,
      [id],
    );
    expect(step2).toEqual([
      { attempt: 1, generation: 1, status: 'succeeded', has_result: true },
      { attempt: 2, generation: 2, status: 'succeeded', has_result: true },
    ]);
    // …and is neither published nor applied by the old generation.
    const [after] = await executions(db.query, [id!]);
    expect(after).toMatchObject({ state: 'completed', generation: 2, owner_node: 'node-b', step: K });
    expect(after!.data.equals(done!.data)).toBe(true);
    expect(await events(db.query, id!)).toEqual(eventsBefore);
    await checkCompleted(db.query, counter, after!, K, { lateSteps: [2] });
    // The end result holds B's step-2 answer, never the old owner's late one.
    const requests = counter.of(id!, 2);
    expect(requests.map((c) => [c.generation, c.node])).toEqual([
      [1, 'node-a'],
      [2, 'node-b'],
    ]);
    expect(openExecutionData(id!, after!.key_id, after!.data).result!.results[1]).toEqual({ step: 2, token: requests[1]!.token });
    expect(a.exit).toBeNull();
    a.kill();
  });

  it('[REL-01][EXE-03] two processes racing to recover the same executions: exactly one advances each', async () => {
    const db = await database();
    const a = await startNode({ databaseUrl: db.url, nodeId: 'node-a', counterUrl: counter.url, faults: 'checkpoint.committed=kill@step:3', submit: 4, stepDelayMs: 300 });
    await killedByFault(a);
    const ids = a.submitted;
    expect(ids.length).toBeGreaterThanOrEqual(1);
    const left = await executions(db.query, ids);
    const savedStep = new Map(left.map((r) => [r.id, r.step]));
    expect(left.every((r) => r.generation === 1 && r.owner_node === 'node-a' && !FINAL.includes(r.state))).toBe(true);

    // The killed owner's leases run out now.
    await db.query(`UPDATE executions SET lease_until = now() WHERE id = ANY($1::uuid[])`, [ids]);
    const [b, c] = await Promise.all([
      startNode({ databaseUrl: db.url, nodeId: 'node-b', counterUrl: counter.url, stepDelayMs: 50 }),
      startNode({ databaseUrl: db.url, nodeId: 'node-c', counterUrl: counter.url, stepDelayMs: 50 }),
    ]);
    // Both claim every execution at the same moment, each three times over, as if each had
    // fetched several recovery jobs of it in one batch.
    const CLAIMS = 3;
    b.send({ claim: ids.flatMap((id) => Array<string>(CLAIMS).fill(id)) });
    c.send({ claim: ids.flatMap((id) => Array<string>(CLAIMS).fill(id)) });
    const outcomes = (node: EngineNode, id: string): unknown[] => node.lines.filter((l) => l.claimed === id).map((l) => l.outcome);
    await waitUntil(
      async () => (ids.every((id) => outcomes(b, id).length === CLAIMS && outcomes(c, id).length === CLAIMS) ? true : undefined),
      10_000,
      () => `claims unanswered: ${JSON.stringify([...b.lines, ...c.lines].filter((l) => 'claimed' in l || 'error' in l))}`,
    );
    let started = 0;
    for (const id of ids) {
      const all = [...outcomes(b, id), ...outcomes(c, id)];
      // At most one claim starts it (the submit's own recovery job may have been quicker than all).
      expect(all.filter((o) => o === 'started').length).toBeLessThanOrEqual(1);
      expect(all.every((o) => o === 'started' || o === 'busy' || o === 'idle')).toBe(true);
      started += all.filter((o) => o === 'started').length;
    }
    // Usually the claims start them; on a slow machine the recovery jobs (fetched by the same two
    // nodes) may have been first. Either way the generations below prove one takeover each.
    expect(started).toBeLessThanOrEqual(ids.length);

    const ended = await waitForStates(db.query, ids, ['outcome_unknown', ...FINAL], 15_000, [b, c]);
    for (const row of ended) {
      // One takeover each: a second successful claim would have made it 3.
      expect(row.generation).toBe(2);
      expect(['node-b', 'node-c']).toContain(row.owner_node);
      const received = counter.of(row.id);
      // Nothing the new owner ran was already saved; nothing the old owner ran comes after its last checkpoint + 1.
      for (const call of received) {
        if (call.generation === 2) expect(call.step).toBeGreaterThan(savedStep.get(row.id)!);
        else expect(call.step).toBeLessThanOrEqual(savedStep.get(row.id)! + 1);
        if (call.generation === 2) expect(call.node).toBe(row.owner_node);
      }
      if (row.state === 'outcome_unknown') {
        // Only if A died between marking an unsafe call sending and saving its result.
        const log = await calls(db.query, row.id);
        expect(log.some((l) => l.status === 'unknown' && !l.safe)).toBe(true);
      } else {
        await checkCompleted(db.query, counter, row, K);
      }
    }
    expect(b.exit).toBeNull();
    expect(c.exit).toBeNull();
  }, 60_000);

  it('[CALL-06] pg_terminate_backend on every engine connection mid-phase: all executions still finish, none stranded', async () => {
    const db = await database();
    const p = await startNode({ databaseUrl: db.url, nodeId: 'node-p', counterUrl: counter.url, submit: 6, stepDelayMs: 250 });
    const ids = await p.waitSubmitted(6);
    let terminated = 0;
    // Every 150 ms for 1.5 s: connections die inside transactions, between statements, mid-commit.
    for (let i = 0; i < 10; i++) {
      await sleep(150);
      const rows = await db.query<{ ok: boolean }>(
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      terminated += rows.filter((r) => r.ok).length;
    }
    expect(terminated).toBeGreaterThan(10);

    const ended = await waitForStates(db.query, ids, ['outcome_unknown', ...FINAL], 20_000, [p]);
    for (const row of ended) await checkCompleted(db.query, counter, row, K);
    expect(p.exit).toBeNull();
  });

  it('[CALL-06] a database restart (immediate shutdown) mid-run: every execution finishes', async () => {
    const dir = join(tmpdir(), `openbot-restart-pg-${process.pid}-${Date.now()}`);
    const port = await freePort();
    restartCluster = { current: new EmbeddedPostgres({ dir, port, ephemeral: true }), dir };
    await restartCluster.current!.start();
    const url = restartCluster.current!.url('openbot');
    const admin = new Client({ connectionString: restartCluster.current!.url('postgres') });
    await admin.connect();
    await admin.query('CREATE DATABASE openbot');
    await admin.end();
    const source = await createDataSource({ url, migrations: MIGRATIONS, poolSize: 2 }).initialize();
    await migrate(source);
    await source.destroy();
    const query = async <T>(sql: string, params: unknown[] = []): Promise<T[]> => {
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(sql, params)).rows as T[];
      } finally {
        await client.end();
      }
    };

    const p = await startNode({ databaseUrl: url, nodeId: 'node-p', counterUrl: counter.url, submit: 6, stepDelayMs: 300 });
    const ids = await p.waitSubmitted(6);
    // Mid-run: some execution has saved a step, and not all have ended.
    await waitUntil(async () => ((await executions(query, ids)).some((r) => r.step >= 1) ? true : undefined), 15_000, () => 'no execution saved a step');
    expect((await executions(query, ids)).filter((r) => !FINAL.includes(r.state)).length).toBeGreaterThan(0);
    await restartCluster.current!.crash();
    // The database stays down a moment (the node's statements fail meanwhile), then restarts.
    await sleep(500);
    // Same folder, same port, same password: the URL the node holds works again. (An `ephemeral`
    // cluster would wipe its folder on start, so the restart is a non-ephemeral start of it.)
    restartCluster.current = new EmbeddedPostgres({ dir, port });
    await restartCluster.current.start();
    expect(restartCluster.current.url('openbot')).toBe(url);

    const ended = await waitForStates(query, ids, ['outcome_unknown', ...FINAL], 25_000, [p]);
    for (const row of ended) await checkCompleted(query, counter, row, K);
    expect(p.exit).toBeNull();
    p.kill('SIGTERM');
    expect(await p.exited).toEqual({ code: 0, signal: null });
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

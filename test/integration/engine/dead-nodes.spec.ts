import type { Engine, Json, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, eventually, executionRow, SERVICE, waitForState, type Deferred } from './helpers';

interface HeldState {
  [key: string]: Json;
  by: string | null;
}

/** One phase that waits for the test (a Turn still streaming) and records which activity ran it. */
function heldWorkflow(name: string, gates: Map<string, Deferred>): Workflow<HeldState, null> {
  return {
    name,
    initial: () => ({ by: null }),
    next: (s) => (s.by === null ? { phase: 'work' } : { end: 'completed', result: s }),
    phases: {
      work: {
        async run(ctx) {
          const gate = gates.get(`${ctx.executionId}#${ctx.generation}`) ?? deferred();
          gates.set(`${ctx.executionId}#${ctx.generation}`, gate);
          await Promise.race([
            gate.promise,
            new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error(String(ctx.signal.reason))), { once: true })),
          ]);
          return { state: { by: ctx.activity } };
        },
      },
    },
  };
}

/** Long leases: a takeover within these tests can only come from dead-node detection. */
const LEASE_SECONDS = 120;

describe('engine: dead-node detection (presence locks)', () => {
  let t: TestEngine;
  const gates = new Map<string, Deferred>();

  beforeAll(async () => {
    t = await startTestEngine({ leaseSeconds: LEASE_SECONDS, deadNodes: false });
    t.engine.register(heldWorkflow('test.held', gates));
  });

  afterAll(async () => {
    for (const gate of gates.values()) gate.resolve();
    await t.close();
  });

  async function peer(nodeId: string, graceMs: number): Promise<Engine> {
    const { engine } = await t.node(nodeId, { leaseSeconds: LEASE_SECONDS, deadNodes: { everyMs: 50, graceMs } });
    engine.register(heldWorkflow('test.held', gates));
    await engine.start();
    return engine;
  }

  it('[REL-01][EXE-03][EXE-04] an owner that holds no presence lock loses its leased execution long before the lease runs out: a peer takes it over with generation 2 and finishes it', async () => {
    // node-a runs without presence (as a process that died would look): its lease is valid for two minutes.
    await t.engine.start();
    const { executionId } = await t.engine.submit({ workflow: 'test.held', input: null, scope: SERVICE });
    await eventually(() => gates.has(`${executionId}#1`), 'the first attempt to start on node-a');
    expect(await executionRow(t.database, executionId)).toMatchObject({ owner_node: 'node-a', generation: 1 });

    const b = await peer('node-b', 200);
    await eventually(async () => (await executionRow(t.database, executionId)).generation === 2, 'node-b to take the execution over');
    const row = await executionRow(t.database, executionId);
    expect(row).toMatchObject({ owner_node: 'node-b', generation: 2 });
    // Taken while node-a's lease was still valid: detection, not expiry.
    expect((await t.database.query<{ valid: boolean }>('SELECT lease_until > now() + interval \'60 seconds\' AS valid FROM executions WHERE id = $1', [executionId]))[0]!.valid).toBe(true);

    // The old attempt is fenced (EXE-04): releasing it saves nothing; the new attempt finishes.
    gates.get(`${executionId}#1`)!.resolve();
    await eventually(() => gates.has(`${executionId}#2`), 'the new attempt to start on node-b');
    gates.get(`${executionId}#2`)!.resolve();
    await waitForState(b, executionId, ['completed']);
    expect(await b.result(executionId)).toEqual({ by: 'work#2' });
  });

  it('[REL-01] a live node whose presence connection blinked keeps its work: it holds the lock again within the grace period, and no peer takes over', async () => {
    const owner = await peer('node-c', 2_000);
    const watcher = await peer('node-d', 2_000);
    const { executionId } = await owner.submit({ workflow: 'test.held', input: null, scope: SERVICE });
    await eventually(() => gates.has(`${executionId}#1`), 'the first attempt to start on node-c');

    const presence = async (): Promise<number[]> =>
      (await t.database.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = 'openbot presence node-c'`)).map((r) => r.pid);
    const [before] = await presence();
    expect(before).toBeDefined();
    await t.database.query('SELECT pg_terminate_backend($1)', [before]);
    // node-c opens its presence connection again (a new backend holds the lock)...
    await eventually(async () => {
      const pids = await presence();
      return pids.length === 1 && pids[0] !== before;
    }, 'node-c to hold its presence lock again');
    // ...and the watcher, polling every 50 ms, saw it absent for less than its grace: it kept its hands off.
    // Three more watch periods of the peer, plus the claim it would make, pass before we look.
    await new Promise((r) => setTimeout(r, 500));
    expect(await executionRow(t.database, executionId)).toMatchObject({ owner_node: 'node-c', generation: 1 });

    gates.get(`${executionId}#1`)!.resolve();
    await waitForState(owner, executionId, ['completed']);
    expect(await owner.result(executionId)).toEqual({ by: 'work#1' });
    expect(watcher.nodeId).toBe('node-d');
  });

  it('a node is known by its presence lock alone: pg-boss keeps no instance registry (whose health sampler would wake an idle node every 20 ms)', async () => {
    const engine = await peer('node-e', 2_000);
    await eventually(
      async () => (await t.database.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = 'openbot presence node-e'`)).length === 1,
      'node-e to hold its presence lock',
    );
    expect(await t.database.query('SELECT application_name FROM pgboss.instance')).toEqual([]);
    expect(engine.nodeId).toBe('node-e');
  });
});

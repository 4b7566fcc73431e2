import { Engine, type Json, type Workflow } from '@openbot/engine';
import { ADVANCE_QUEUE, EngineNode } from '@openbot/engine/node';
import { Keyring, Sealer, SqlFailureRecorder } from '@openbot/platform';
import { Pool } from 'pg';
import { startTestApp, type TestApp } from '../../support/test-app';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { SERVICE, waitForState } from './helpers';

interface Relay {
  [key: string]: Json;
  /** Which node ran each phase, in order. */
  ranOn: string[];
}

/** Two phases with a signal between them; each records the node that ran it. */
function relay(node: string): Workflow<Relay, null> {
  return {
    name: 'plat05.relay',
    initial: () => ({ ranOn: [] }),
    next: (s) => (s.ranOn.length === 2 ? { end: 'completed', result: s.ranOn } : { phase: 'work' }),
    phases: {
      work: {
        run(ctx) {
          const state = { ranOn: [...ctx.state.ranOn, node] };
          return Promise.resolve(state.ranOn.length === 1 ? { state, wait: { signals: ['go'] } } : { state });
        },
      },
    },
  };
}

/**
 * PLAT-05: a one-node deployment is the many-node deployment with one node. The server as
 * `apps/server` composes it runs its executions through the same Engine, the same advance queue
 * and the same leases the multi-node tests use, so another node can continue them. A one-node
 * shortcut (running in memory, skipping the queue or the lease) fails here.
 */
describe('one engine path for one and many nodes', () => {
  let database: TestDatabase;
  let server: TestApp | null = null;
  let other: { engine: EngineNode; pool: Pool } | null = null;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await server?.close();
    await other?.engine.stop(1_000);
    await other?.pool.end();
    await database.drop();
  });

  it('[PLAT-05] the one-node server runs an execution through the queue and the lease, and a second node continues it', async () => {
    server = await startTestApp({ database });
    const engine = server.app.get(Engine);
    // The class the multi-node tests start twice (test/support/test-engine.ts, the system tier's engine-node).
    expect(engine).toBeInstanceOf(EngineNode);
    engine.register(relay('server'));

    const { executionId } = await engine.submit({ workflow: 'plat05.relay', input: null, scope: SERVICE });
    const waiting = await waitForState(engine, executionId, ['waiting']);
    // Claimed like any node claims: a lease taken by generation, not a local run.
    expect(waiting.generation).toBe(1);
    const jobs = await database.query<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND data->>'executionId' = $2::text`, [
      ADVANCE_QUEUE,
      executionId,
    ]);
    // Its advance job went through pg-boss, the queue every node works from.
    expect(jobs[0]!.n).toBeGreaterThanOrEqual(1);

    // The one node stops; another node on the same database continues from the saved state.
    const serverKey = server.config.masterKey;
    await server.close();
    server = null;
    const pool = new Pool({ connectionString: database.url, max: 5 });
    pool.on('error', () => undefined);
    const sealer = new Sealer(new Keyring(serverKey));
    other = { pool, engine: new EngineNode({ pool, connectionString: database.url, sealer, failures: new SqlFailureRecorder(sealer), nodeId: 'node-b', leaseSeconds: 3 }) };
    other.engine.register(relay('node-b'));
    await other.engine.start();
    expect(await other.engine.signal(executionId, 'go')).toBe(true);

    const ended = await waitForState(other.engine, executionId, ['completed', 'failed']);
    expect(ended.state).toBe('completed');
    expect(await other.engine.result(executionId)).toEqual(['server', 'node-b']);
    expect(ended.generation).toBe(2);
  });
});

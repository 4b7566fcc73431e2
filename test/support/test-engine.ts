import { FaultPoints } from '@openbot/engine';
import { PreparedClient, type EngineOptions, EngineNode } from '@openbot/engine/node';
import { Keyring, Sealer, SqlFailureRecorder } from '@openbot/platform';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { createTestDatabase, type TestDatabase } from './test-database';

export interface TestEngine {
  readonly engine: EngineNode;
  readonly pool: Pool;
  readonly database: TestDatabase;
  readonly sealer: Sealer;
  readonly faults: FaultPoints;
  /** Another node on the same database (a second engine with its own pool and node ID). */
  node(nodeId: string, options?: Partial<EngineOptions>): Promise<{ engine: EngineNode; pool: Pool; stop(): Promise<void> }>;
  close(): Promise<void>;
}

/** A real engine on a fresh migrated database, outside Nest (integration tier). */
export async function startTestEngine(options: Partial<EngineOptions> & { database?: TestDatabase } = {}): Promise<TestEngine> {
  const database = options.database ?? (await createTestDatabase());
  const sealer = new Sealer(new Keyring({ id: 'test1', key: randomBytes(32) }));
  const extraNodes: Array<() => Promise<void>> = [];
  const build = async (nodeId: string, extra: Partial<EngineOptions>): Promise<{ engine: EngineNode; pool: Pool; stop(): Promise<void> }> => {
    // The node's client and pipelining (decisions 052, 062): the engine's tests run what the node runs.
    const pool = new Pool({ connectionString: database.url, max: 20, pipeline: true, Client: PreparedClient });
    pool.on('error', () => undefined);
    const engine = new EngineNode({
      pool,
      connectionString: database.url,
      sealer,
      failures: new SqlFailureRecorder(sealer),
      nodeId,
      leaseSeconds: 3,
      faults: extra.faults ?? new FaultPoints(),
      ...extra,
    });
    return {
      engine,
      pool,
      async stop() {
        // Idempotent: a test may stop a node itself (a restart) before close() stops the rest.
        if (pool.ended) return;
        await engine.stop(1_000);
        await pool.end();
      },
    };
  };
  const first = await build('node-a', options);
  return {
    engine: first.engine,
    pool: first.pool,
    database,
    sealer,
    faults: first.engine.faults,
    async node(nodeId, extra = {}) {
      const node = await build(nodeId, extra);
      extraNodes.push(() => node.stop());
      return node;
    },
    async close() {
      for (const stop of extraNodes) await stop();
      await first.stop();
      if (options.database === undefined) await database.drop();
    },
  };
}

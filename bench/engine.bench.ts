/**
 * The `engine` workload of docs/benchmarks.md, exactly: W = 500 executions of K = 10 sequential
 * durable phases, C = 16 in flight, on an embedded PostgreSQL with default settings (fsync and
 * synchronous_commit on). Prints one summary line for the engine and one for the physical floor
 * (`pg-floor`: C connections committing single-row INSERTs), then their ratio.
 */
import '../apps/server/src/module-paths';
import { type Json, type Workflow } from '@openbot/engine';
import { EngineNode } from '@openbot/engine/node';
import { createDataSource } from '@openbot/features';
import { EmbeddedPostgres, Keyring, migrate, Sealer, SqlFailureRecorder } from '@openbot/platform';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Pool } from 'pg';
import { MIGRATIONS } from '../migrations';
import { stopOnInterrupt } from './interrupt';
import { statementLines } from './pg-statements';

const W = Number(process.env.BENCH_W ?? 500);
const K = Number(process.env.BENCH_K ?? 10);
const C = Number(process.env.BENCH_C ?? 16);
/** `BENCH_PG_STATEMENTS=1`: loads pg_stat_statements and prints the engine's statements per execution after its line. */
const PG_STATEMENTS = process.env.BENCH_PG_STATEMENTS === '1';

interface Line {
  name: string;
  wallS: number;
  latencies: number[];
}

const workflow: Workflow<{ [k: string]: Json; i: number; n: number; last: Json }, { i: number }> = {
  name: 'bench.steps',
  initial: ({ i }) => ({ i, n: 0, last: null }),
  next: (s) => (s.n < K ? { phase: 'step' } : { end: 'completed', result: s.last }),
  phases: {
    step: {
      async run({ state }) {
        const n = state.n + 1;
        return { state: { ...state, n, last: { i: state.i, n } } };
      },
    },
  },
};

async function main(): Promise<void> {
  const cluster = new EmbeddedPostgres({ dir: join(tmpdir(), `openbot-bench-${process.pid}`), ephemeral: true,
    settings: { max_connections: '200', ...(PG_STATEMENTS ? { shared_preload_libraries: 'pg_stat_statements' } : {}) },
  });
  stopOnInterrupt(() => cluster.stop());
  await cluster.start();
  try {
    const admin = new Client({ connectionString: cluster.socketUrl() });
    await admin.connect();
    await admin.query('CREATE DATABASE bench');
    await admin.end();
    const url = cluster.socketUrl('bench');
    const dataSource = await createDataSource({ url, migrations: MIGRATIONS, poolSize: C + 4 }).initialize();
    await migrate(dataSource);
    if (process.env.BENCH_SQL) await dataSource.query(process.env.BENCH_SQL);
    if (PG_STATEMENTS) await dataSource.query('CREATE EXTENSION pg_stat_statements');
    const engineLine = await benchEngine(dataSource, url);
    const statements = PG_STATEMENTS ? await statementLines((sql) => dataSource.query(sql), W, 'execution', 25) : [];
    await dataSource.destroy();
    const floorLine = await benchFloor(url);
    print(engineLine);
    print(floorLine);
    for (const line of statements) process.stdout.write(`${line}\n`);
    const ratio = perStepMs(engineLine) / perStepMs(floorLine);
    process.stdout.write(`ratio per_step_ms engine/pg-floor = ${ratio.toFixed(2)}\n`);
  } finally {
    await cluster.stop();
  }
}

async function benchEngine(dataSource: Awaited<ReturnType<ReturnType<typeof createDataSource>['initialize']>>, url: string): Promise<Line> {
  const sealer = new Sealer(new Keyring({ id: 'bench', key: randomBytes(32) }));
  const pool = (dataSource.driver as unknown as { master: Pool }).master;
  const engine = new EngineNode({ pool, connectionString: url, sealer, failures: new SqlFailureRecorder(sealer), nodeId: 'bench-node', leaseSeconds: 30 });
  engine.register(workflow);
  await engine.start();
  const runOne = async (i: number): Promise<number> => {
    const started = performance.now();
    const { executionId } = await engine.submit({ workflow: workflow.name, input: { i }, scope: { kind: 'service', id: '00000000-0000-7000-8000-00000000b0b0', organizationId: null } });
    const state = await engine.waitForEnd(executionId);
    const result = (await engine.result(executionId)) as { i: number; n: number } | null;
    if (state !== 'completed' || result?.i !== i || result.n !== K) throw new Error(`execution ${i} ended ${state} with ${JSON.stringify(result)}`);
    return performance.now() - started;
  };
  await lanes(C, C, runOne); // unmeasured warm-up
  if (PG_STATEMENTS) await dataSource.query('SELECT pg_stat_statements_reset()');
  const started = performance.now();
  const latencies = await lanes(W, C, (i) => runOne(C + i));
  const wallS = (performance.now() - started) / 1000;
  await engine.stop(1_000);
  return { name: 'openbot-engine', wallS, latencies };
}


async function benchFloor(url: string): Promise<Line> {
  const clients = await Promise.all(
    Array.from({ length: C }, async () => {
      const client = new Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  await clients[0]!.query('CREATE TABLE IF NOT EXISTS bench_floor (id bigserial PRIMARY KEY, v jsonb)');
  const total = W * K;
  let next = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      while (next < total) {
        next += 1;
        const t = performance.now();
        await client.query('INSERT INTO bench_floor (v) VALUES ($1)', [{ i: next }]);
        latencies.push((performance.now() - t) * K);
      }
    }),
  );
  const wallS = (performance.now() - started) / 1000;
  await Promise.all(clients.map((c) => c.end()));
  return { name: 'pg-floor', wallS, latencies };
}

/** C lanes, each starting its next item as soon as the previous one ends. */
async function lanes(count: number, width: number, work: (i: number) => Promise<number>): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const i = next++;
        latencies.push(await work(i));
      }
    }),
  );
  return latencies;
}

function perStepMs(line: Line): number {
  return (line.wallS * 1000 * C) / (W * K);
}

function print(line: Line): void {
  const sorted = [...line.latencies].sort((a, b) => a - b);
  const pct = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
  const cols = [
    line.name,
    line.wallS.toFixed(2),
    (W / line.wallS).toFixed(1),
    ((W * K) / line.wallS).toFixed(0),
    perStepMs(line).toFixed(2),
    pct(50).toFixed(1),
    pct(99).toFixed(1),
  ];
  process.stdout.write(`${cols.join(' ')}\n`);
}

process.stdout.write(`engine workload: W=${W} K=${K} C=${C}\nname wall_s workflows_per_s steps_per_s per_step_ms p50_ms p99_ms\n`);
main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);

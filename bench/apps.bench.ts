import '../apps/server/src/module-paths';
import { codec, defineWorkflow, type Json } from '@openbot/engine';
import { EngineNode } from '@openbot/engine/node';
import { createDataSource } from '@openbot/features';
import { Keyring, Sealer, SqlFailureRecorder } from '@openbot/platform';
import { declare, McpConnection, type ToolDeclaration } from '@openbot/protocol';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { startSdkServer } from '../test/fakes/mcp-test-servers';
import { startBenchDatabase } from './bench-database';

/**
 * `npm run bench:apps`: what a durable App call adds to an MCP `tools/call` on loopback. Three
 * lines over the same SDK McpServer (stateless 2026-07-28 revision): a direct SDK call on one open
 * connection; the same call under the engine's call log (intent, sending, saved result) on one
 * open connection (session reuse); and a call that opens and closes its own connection, as a
 * Turn's App call does today (decision 032). p50 and p99 over BENCH_N calls (default 500).
 */
const N = Number(process.env.BENCH_N ?? 500);

const BENCH_APP = defineWorkflow({
  name: 'bench.app-calls',
  input: codec.object({ n: codec.number }),
  state: codec.object({ n: codec.number, done: codec.boolean }),
  calls: { call: codec.json },
});

async function main(): Promise<void> {
  const work = join(tmpdir(), `openbot-bench-apps-${process.pid}`);
  const { cluster, url } = await startBenchDatabase(work);
  const server = await startSdkServer({ era: 'modern', tools: () => [{ name: 'echo', inputSchema: { type: 'object', properties: { m: { type: 'string' } } }, handler: async (a) => ({ text: String(a.m) }) }] });
  try {
    const open = (): Promise<McpConnection> => McpConnection.open({ url: server.url, fetch, answerLimitBytes: 1 << 20 });
    const connection = await open();
    const listed = (await connection.listTools()).tools[0]!;
    const declaration: ToolDeclaration = declare(listed, { id: 'bench', revision: 1 }, 'echo');
    for (let i = 0; i < 20; i++) await connection.callTool(declaration, { m: 'warm' });

    const direct: number[] = [];
    for (let i = 0; i < N; i++) {
      const started = performance.now();
      await connection.callTool(declaration, { m: `d${i}` });
      direct.push(performance.now() - started);
    }

    const durable: number[] = [];
    const perCall: number[] = [];
    const dataSource = await createDataSource({ url, migrations: [], poolSize: 6 }).initialize();
    const pool = (dataSource.driver as unknown as { master: Pool }).master;
    const sealer = new Sealer(new Keyring({ id: 'bench', key: randomBytes(32) }));
    const engine = new EngineNode({ pool, connectionString: url, sealer, failures: new SqlFailureRecorder(sealer), nodeId: 'bench-node', leaseSeconds: 30 });
    engine.register(
      BENCH_APP.implement({
        initial: (input) => ({ n: input.n, done: false }),
        next: (state) => (state.done ? { end: 'completed' } : { phase: 'calls' }),
        phases: {
          calls: {
            async run(context) {
              for (let i = 0; i < context.state.n; i++) {
                const started = performance.now();
                await context.call(`call:${i}`, { safe: true, kind: 'tool' }, async () => ({ ...(await connection.callTool(declaration, { m: `e${i}` })) }) as Json);
                durable.push(performance.now() - started);
              }
              for (let i = 0; i < context.state.n; i++) {
                const started = performance.now();
                await context.call(`call:own-${i}`, { safe: true, kind: 'tool' }, async () => {
                  const own = await open();
                  try {
                    return { ...(await own.callTool(declaration, { m: `o${i}` })) } as Json;
                  } finally {
                    await own.close();
                  }
                });
                perCall.push(performance.now() - started);
              }
              return { state: { ...context.state, done: true } };
            },
          },
        },
      }),
    );
    await engine.start();
    const { executionId } = await engine.submit({ workflow: BENCH_APP.name, input: { n: N }, scope: { kind: 'service', id: '00000000-0000-7000-8000-00000000b0b0', organizationId: null } });
    const state = await engine.waitForEnd(executionId);
    if (state !== 'completed') throw new Error(`the bench execution ended ${state}`);
    await engine.stop(5_000);
    await dataSource.destroy();
    await connection.close();

    const line = (name: string, ms: number[]): void => void process.stdout.write(`${name.padEnd(44)} p50 ${pct(ms, 50).toFixed(2)} ms  p99 ${pct(ms, 99).toFixed(2)} ms  (n=${ms.length})\n`);
    line('direct SDK call, one connection', direct);
    line('durable call (call log), one connection', durable);
    line('durable call, own connection per call', perCall);
    process.stdout.write(`added by the call log at p50: ${(pct(durable, 50) - pct(direct, 50)).toFixed(2)} ms (target ≤ 3 ms)\n`);
  } finally {
    await server.close();
    await cluster.stop();
  }
}

function pct(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

void main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});

/**
 * The `observers` workload of docs/benchmarks.md: many readers of live Turns on one node. One
 * server (`main.js serve`) on an embedded PostgreSQL; a scripted model streams 200 tokens, one
 * every 20 ms. 100 Turns are admitted at once; a separate client process
 * (bench/observer-clients.ts) follows each with 10 SSE streams (1,000 in all) and opens 100
 * more that connect and never read. The model holds every stream until all of them are
 * connected, so what is measured is delivery to readers that are there, not a late reader's
 * replay of what it missed. A warm-up of 10 Turns runs first (`BENCH_WARMUP`). Reports
 * delivery lag (a client's receipt of an event minus the event's stored time, for events stored
 * after the release) p50 and p99, the server's RSS at the start (before the warm-up) and its
 * peak, and the CPU seconds of the server and of the clients (on 2 cores they compete).
 */
import '../apps/server/src/module-paths';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { Client } from 'pg';
import { startBenchDatabase } from './bench-database';
import { FakeModelServer } from './fake-model';
import { stopOnInterrupt } from './interrupt';
import { statementLines } from './pg-statements';
import { agent, api, sleep, startServer, type ServerProcess } from './server-process';

const TURNS = Number(process.env.BENCH_TURNS ?? 100);
const PER_TURN = Number(process.env.BENCH_PER_TURN ?? 10);
const STALLED = Number(process.env.BENCH_STALLED ?? 100);
const TOKENS = 200;
/**
 * Turns streamed to their readers before the measured ones, on a model of their own without the
 * gate: the server's streaming code is compiled and its pools are warm, as on a node that has been
 * serving (the turn bench warms up the same way). The RSS start is read before them.
 */
const WARMUP_TURNS = Number(process.env.BENCH_WARMUP ?? 10);
const CLIENTS = join(__dirname, 'observer-clients.js');
const TICKS_PER_S = 100;
/** Extra Node flags for the server, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to find where its CPU goes. */
const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
/** Diagnostic only (changes the database settings): the statements per Turn, admission to end, from pg_stat_statements. */
const PG_STATEMENTS = process.env.BENCH_PG_STATEMENTS === '1';

async function main(): Promise<number> {
  const work = join(tmpdir(), `openbot-observers-bench-${process.pid}`);
  mkdirSync(work, { recursive: true });
  const { cluster, url } = await startBenchDatabase(work, { statements: PG_STATEMENTS });
  let server: ServerProcess | null = null;
  let fake: FakeModelServer | null = null;
  let warmModel: FakeModelServer | null = null;
  let stats: Client | null = null;
  try {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    fake = await FakeModelServer.start({ tokens: TOKENS, firstTokenDelayMs: 50, tokenIntervalMs: 20, gate });
    server = await startServer({ databaseUrl: url, work, nodeArgs: SERVER_NODE_ARGS, logLevel: 'warn', env: { OPENBOT_STREAMS_PER_NODE: '1000000' } });
    const base = server.base;
    const org = await api<{ apiKey: { secret: string } }>(base, 'POST', '/v1/organizations', server.adminToken, { name: 'Observers' }, 201);
    const secret = org.apiKey.secret;
    await api(base, 'POST', '/v1/model-providers', secret, { name: 'fake', kind: 'openai-compatible', baseUrl: fake.baseUrl }, 201);
    const bot = await api<{ id: string }>(base, 'POST', '/v1/bots', secret, { name: 'Observed bot', model: 'fake/gpt-bench', instructions: 'x' }, 201);
    const chats = await Promise.all(Array.from({ length: TURNS }, () => api<{ id: string }>(base, 'POST', '/v1/chats', secret, { botId: bot.id }, 201)));
    const rssStart = server.memory().rssMb;
    if (WARMUP_TURNS > 0) {
      warmModel = await FakeModelServer.start({ tokens: TOKENS, firstTokenDelayMs: 50, tokenIntervalMs: 20 });
      await api(base, 'POST', '/v1/model-providers', secret, { name: 'warm', kind: 'openai-compatible', baseUrl: warmModel.baseUrl }, 201);
      const warmBot = await api<{ id: string }>(base, 'POST', '/v1/bots', secret, { name: 'Warm-up bot', model: 'warm/gpt-bench', instructions: 'x' }, 201);
      const warmChats = await Promise.all(Array.from({ length: WARMUP_TURNS }, () => api<{ id: string }>(base, 'POST', '/v1/chats', secret, { botId: warmBot.id }, 201)));
      const warm = await Promise.all(warmChats.map((chat, k) => api<{ executionId: string }>(base, 'POST', `/v1/chats/${chat.id}/messages`, secret, { content: `warm-up ${k}` }, 202)));
      const warmed = await runClients({ base, secret, executionIds: warm.map((a) => a.executionId), perTurn: PER_TURN, stalled: 0 }, async (child) => void child.write(`released ${Date.now()}\n`));
      if (warmed.failed > 0) throw new Error(`warm-up: ${warmed.failed} stream(s) failed`);
    }

    if (PG_STATEMENTS) {
      stats = new Client({ connectionString: url });
      await stats.connect();
      await stats.query('SELECT pg_stat_statements_reset()');
    }
    const serverCpuStart = cpuSeconds(server.pid);
    const admitted = await Promise.all(chats.map((chat, k) => api<{ executionId: string }>(base, 'POST', `/v1/chats/${chat.id}/messages`, secret, { content: `observed ${k}` }, 202)));
    let peak = rssStart;
    const sampler = setInterval(() => (peak = Math.max(peak, server!.memory().rssMb)), 100);
    const model = fake;
    const result = await runClients({ base, secret, executionIds: admitted.map((a) => a.executionId), perTurn: PER_TURN, stalled: STALLED }, async (child) => {
      // Every stream is open and every Turn's model request waits: start them all.
      while (model.timings.length < TURNS) await sleep(20);
      const releasedAt = Date.now();
      release();
      child.write(`released ${releasedAt}\n`);
    });
    clearInterval(sampler);
    peak = Math.max(peak, server.memory().rssMb);
    const serverCpu = cpuSeconds(server.pid) - serverCpuStart;

    process.stdout.write(
      `observers: streams=${TURNS * PER_TURN} stalled=${STALLED} events=${result.events} failed=${result.failed} delivery_lag_ms p50=${result.p50.toFixed(0)} p99=${result.p99.toFixed(0)} ` +
        `rss_mb start=${rssStart.toFixed(0)} peak=${peak.toFixed(0)} growth=${(peak - rssStart).toFixed(0)} cpu_s server=${serverCpu.toFixed(1)} clients=${result.cpuS.toFixed(1)}\n`,
    );
    const types = Object.entries(result.byType).map(([type, lag]) => `${type} n=${lag.n} p50=${lag.p50.toFixed(0)} p99=${lag.p99.toFixed(0)}`);
    process.stdout.write(`observers lag by type (ms): ${types.join('  ')}\n`);
    const seconds = Object.entries(result.bySecond).map(([second, lag]) => `${second}s n=${lag.n} p50=${lag.p50.toFixed(0)} p99=${lag.p99.toFixed(0)}`);
    process.stdout.write(`observers lag by second after release (ms): ${seconds.join('  ')}\n`);
    if (stats !== null) {
      const client = stats;
      const lines = await statementLines(async (sql) => (await client.query<{ query: string; calls: string; mean_ms: number }>(sql)).rows, TURNS, 'turn', 30);
      for (const line of lines) process.stdout.write(`${line}\n`);
    }
    process.stdout.write(`targets: delivery_lag_ms p99<=50 (${result.p99 <= 50 ? 'met' : 'MISSED'}) rss_growth_mb<=150 (${peak - rssStart <= 150 ? 'met' : 'MISSED'})\n`);
    return result.failed === 0 ? 0 : 1;
  } finally {
    // Closed on every path, also when the bench fails before printing.
    await stats?.end().catch(() => undefined);
    agent.destroy();
    await server?.stop();
    await fake?.close();
    await warmModel?.close();
    await cluster.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

interface ClientsResult {
  readonly events: number;
  readonly p50: number;
  readonly p99: number;
  readonly failed: number;
  readonly cpuS: number;
  readonly byType: Record<string, { readonly n: number; readonly p50: number; readonly p99: number }>;
  /** By the whole second after release in which the event was stored. */
  readonly bySecond: Record<string, { readonly n: number; readonly p50: number; readonly p99: number }>;
}

/** Runs the clients in their own process and answers their summary; `connected` runs once every stream is open. */
function runClients(job: Record<string, unknown>, connected: (input: Writable) => Promise<void>): Promise<ClientsResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLIENTS], { stdio: ['pipe', 'pipe', 'inherit'] });
    stopOnInterrupt(async () => void (child.exitCode === null && child.kill()));
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (!out.startsWith('connected\n')) return;
      out = out.slice('connected\n'.length);
      connected(child.stdin).catch(reject);
    });
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as ClientsResult) : reject(new Error(`clients exited ${code}`))));
    child.stdin.write(`${JSON.stringify(job)}\n`);
  });
}

/** A process's user + system CPU seconds, from /proc. */
function cpuSeconds(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
}

process.stdout.write(`observers workload: turns=${TURNS} streams_per_turn=${PER_TURN} stalled=${STALLED} tokens=${TOKENS} (20 ms/token) warm-up=${WARMUP_TURNS}\n`);
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);

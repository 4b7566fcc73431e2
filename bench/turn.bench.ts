/**
 * The `turn` workload of docs/benchmarks.md: the durability overhead of a Chat Turn. A scripted
 * OpenAI-compatible model (bench/fake-model.ts, in this process) streams a fixed 200-token reply,
 * one token per 5 ms after a 50 ms first-token delay. The OpenBot server runs as a child process
 * (`dist/apps/server/src/main.js serve`, so its RSS is its own) on an embedded PostgreSQL with
 * default settings, started and migrated here as in the engine bench. N = 200 Turns over 50 Chats,
 * C = 20 in flight (never two on one Chat, so every admission is `started`; the lanes start
 * staggered, see ARRIVALS), each posted through the public API and observed over SSE. Prints one summary line, the targets, and a breakdown.
 *
 * Added first-token latency = client receive of the first `text.delta` − the model's first-token
 * send; added end latency = client receive of `execution.ended` − the model's last byte. Both
 * clocks are this process's (`performance.timeOrigin + performance.now()`).
 *
 * Exits non-zero when a Turn did not end `completed`, was not `started` at once, or streamed a
 * reply (its `text.delta` texts joined) other than the model's.
 */
import '../apps/server/src/module-paths';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startBenchDatabase } from './bench-database';
import { FakeModelServer, nowMs, type ModelTiming } from './fake-model';
import { statementLines } from './pg-statements';
import { agent, api, sleep, startServer, type ServerProcess } from './server-process';

const N = Number(process.env.BENCH_TURNS ?? 200);
const CHATS = Number(process.env.BENCH_CHATS ?? 50);
const C = Number(process.env.BENCH_C ?? 20);
/**
 * Unmeasured Turns first, ten times as many as the measured ones by default: the server's JIT
 * keeps compiling the long tail of warm functions for a thousand Turns and more (`--trace-opt` in
 * the measured window: 306 compilations, 253 ms, after 200 warm-up Turns; 30 and 43 ms after
 * 2,000), so a short warm-up measures the compiler, not a node that has been serving
 * (docs/benchmarks.md).
 */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2000);
const TOKENS = Number(process.env.BENCH_TOKENS ?? 200);
/**
 * The lanes' arrivals. A Turn's length is nearly fixed (the model's 50 ms + 5 ms per token), so C
 * lanes started together stay in step: every ~1 s, C messages arrive in the same millisecond and
 * the last admission waits for the C - 1 before it. `staggered` (the default) starts lane i after
 * i × (one Turn / C), so messages arrive one by one at the same rate, as C users who did not
 * agree on a moment do. `together` (`BENCH_ARRIVALS=together`) keeps the waves, to measure them.
 */
const ARRIVALS = process.env.BENCH_ARRIVALS === 'together' ? 'together' : 'staggered';
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
/** Extra node flags for the server process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (split on spaces). */
/** Diagnostic only (changes the database settings): per-statement calls and time per Turn from pg_stat_statements. */
const PG_STATEMENTS = process.env.BENCH_PG_STATEMENTS === '1';
const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
/** `BENCH_BILLING=1`: one organization budget and one rate limit that never bind, so every call reserves and every message is checked (decision 024). */
const BILLING = process.env.BENCH_BILLING === '1';
/**
 * Turns of the billing comparison, run after the measured window (0: none): half on an
 * organization with a budget per kind and credits (none of them binding), half on one without,
 * interleaved, the same workload. Prints one `turn billing:` line: admission and Turn times with
 * and without (decision 081: fitting `max_tokens` to what the limits afford must not slow them).
 */
const BILLING_COMPARE = Number(process.env.BENCH_BILLING_COMPARE ?? 200);
/** `BENCH_METRICS=1`: the server records metrics (OPENBOT_METRICS_PORT, any free port; decision 034), to compare with them off. */
const METRICS = process.env.BENCH_METRICS === '1';
/** `BENCH_TRACES=1`: the server exports traces (OTEL_EXPORTER_OTLP_ENDPOINT) to a sink here that accepts and drops them. */
const TRACES = process.env.BENCH_TRACES === '1';
const TARGET_FIRST_P50 = 5;
const TARGET_FIRST_P99 = 25;
/**
 * A PostgreSQL backend flushes its table statistics at most once a second; statistics left pending
 * when it goes idle are flushed after 10 s (PGSTAT_IDLE_INTERVAL), so counters are read after that.
 */
const STATS_SETTLE_MS = 11_000;
const TURN_TIMEOUT_MS = 60_000;

interface Turn {
  readonly k: number;
  readonly marker: string;
  readonly chatId: string;
  /** The API key of the Chat's organization, when it is not the bench organization's. */
  readonly secret?: string;
  postAt: number;
  admittedAt: number;
  admission: string;
  executionId: string;
  streamOpenAt: number;
  firstDeltaAt: number;
  endedAt: number;
  endState: string;
  text: string;
  events: number;
  deltas: number;
  timing?: ModelTiming;
}

interface DbCounters {
  rows: number;
  commits: number;
  /** Deadlocks PostgreSQL broke (each one stalls its statements for `deadlock_timeout`, 1 s). */
  deadlocks: number;
  walBytes: number;
  walRecords: number;
  byTable: Map<string, number>;
}

async function main(): Promise<number> {
  const work = join(tmpdir(), `openbot-turn-bench-${process.pid}`);
  mkdirSync(work, { recursive: true });
  const { cluster, url } = await startBenchDatabase(work, { statements: PG_STATEMENTS });
  let server: ServerProcess | null = null;
  let fake: FakeModelServer | null = null;
  let sink: Server | null = null;
  try {
    fake = await FakeModelServer.start({ tokens: TOKENS });
    const env: Record<string, string> = {};
    if (METRICS) env.OPENBOT_METRICS_PORT = '0';
    if (TRACES) {
      sink = await traceSink();
      env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(sink.address() as { port: number }).port}`;
    }
    server = await startServer({ databaseUrl: url, work, nodeArgs: SERVER_NODE_ARGS, logLevel: LOG_LEVEL, env });
    const base = server.base;
    const adminToken = server.adminToken;

    // Bootstrap through the public API.
    const org = await api<{ apiKey: { secret: string } }>(base, 'POST', '/v1/organizations', adminToken, { name: 'Bench' }, 201);
    const secret = org.apiKey.secret;
    await api(base, 'POST', '/v1/model-providers', secret, { name: 'fake', kind: 'openai-compatible', baseUrl: fake.baseUrl }, 201);
    const bot = await api<{ id: string }>(base, 'POST', '/v1/bots', secret, { name: 'Bench bot', model: 'fake/gpt-bench', instructions: 'x' }, 201);
    if (BILLING) {
      await api(base, 'PUT', `/v1/prices/${encodeURIComponent('fake/gpt-bench')}`, secret, { inputPerMillionMicros: 1_000, outputPerMillionMicros: 2_000 }, 200);
      await api(base, 'POST', '/v1/budgets', secret, { scope: { kind: 'organization' }, period: 'month', limitMicros: Number.MAX_SAFE_INTEGER }, 201);
      await api(base, 'POST', '/v1/rate-limits', secret, { scope: { kind: 'organization' }, requestsPerMinute: 1_000_000_000, tokensPerMinute: 1_000_000_000 }, 201);
    }
    const chats: string[] = [];
    for (let i = 0; i < CHATS; i++) chats.push((await api<{ id: string }>(base, 'POST', '/v1/chats', secret, { botId: bot.id }, 201)).id);
    // Warm-up Turns run on Chats of their own, so each measured Chat holds exactly its measured Turns.
    const warmChats: string[] = [];
    for (let i = 0; i < Math.min(WARMUP, C); i++) warmChats.push((await api<{ id: string }>(base, 'POST', '/v1/chats', secret, { botId: bot.id }, 201)).id);

    const warm = Array.from({ length: WARMUP }, (_, k) => newTurn(k, `warmup-${k}`, warmChats[k % warmChats.length]!));
    await runTurns(base, secret, warm, Math.min(WARMUP, C), 0);
    const warmFailures = check(warm, fake);
    if (warmFailures.length > 0) throw new Error(`warm-up failed:\n${warmFailures.join('\n')}`);

    const stats = new Client({ connectionString: url });
    await stats.connect();
    const postmaster = procStat((await stats.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid)!.ppid;
    await sleep(STATS_SETTLE_MS);
    const before = await dbCounters(stats);
    const logLinesBefore = server.logLines();

    const turns = Array.from({ length: N }, (_, k) => newTurn(k, `turn-${k}`, chats[k % chats.length]!));
    if (PG_STATEMENTS) await stats.query('SELECT pg_stat_statements_reset()');
    const cpuBefore = cpuSnapshot(server.pid, postmaster);
    const started = nowMs();
    await runTurns(base, secret, turns, C, ARRIVALS === 'staggered' ? (50 + 5 * TOKENS) / C : 0);
    const wallS = (Math.max(...turns.map((t) => t.endedAt)) - started) / 1000;
    const cpu = cpuDelta(cpuBefore, cpuSnapshot(server.pid, postmaster));
    const rss = server.memory();
    const logLines = server.logLines() - logLinesBefore;

    await sleep(STATS_SETTLE_MS);
    const after = await dbCounters(stats);

    if (PG_STATEMENTS) {
      // The whole measured window, every client.
      const lines = await statementLines(async (sql) => (await stats.query<{ query: string; calls: string; mean_ms: number }>(sql)).rows, N, 'turn', 45);
      for (const line of lines) process.stdout.write(`${line}\n`);
    }
    const failures = check(turns, fake);
    report(turns, wallS, rss, before, after, logLines, fake, cpu);
    await stats.end();
    if (BILLING_COMPARE > 0) failures.push(...(await compareBilling(base, adminToken, fake)));
    if (failures.length > 0) {
      process.stderr.write(`${failures.length} Turn(s) failed:\n${failures.slice(0, 20).join('\n')}\n`);
      return 1;
    }
    return 0;
  } finally {
    agent.destroy();
    await server?.stop();
    await fake?.close();
    sink?.close();
    await cluster.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

// ---- the Turns ---------------------------------------------------------------------------------

function newTurn(k: number, marker: string, chatId: string, secret?: string): Turn {
  return {
    k,
    marker,
    chatId,
    ...(secret === undefined ? {} : { secret }),
    postAt: Number.NaN,
    admittedAt: Number.NaN,
    admission: '',
    executionId: '',
    streamOpenAt: Number.NaN,
    firstDeltaAt: Number.NaN,
    endedAt: Number.NaN,
    endState: '',
    text: '',
    events: 0,
    deltas: 0,
  };
}

/**
 * Runs the Turns `width` at a time: each lane takes the first waiting Turn whose Chat has none in
 * flight (so every admission is `started`), as soon as its previous Turn ended. Lane i starts
 * after i × `staggerMs`.
 */
async function runTurns(base: string, secret: string, turns: Turn[], width: number, staggerMs: number): Promise<void> {
  const waiting = [...turns];
  const busy = new Set<string>();
  let released: Array<() => void> = [];
  const lane = async (): Promise<void> => {
    for (;;) {
      const index = waiting.findIndex((t) => !busy.has(t.chatId));
      if (index === -1) {
        if (waiting.length === 0) return;
        await new Promise<void>((resolve) => released.push(resolve));
        continue;
      }
      const [turn] = waiting.splice(index, 1);
      busy.add(turn!.chatId);
      try {
        await runTurn(base, secret, turn!);
      } finally {
        busy.delete(turn!.chatId);
        const wake = released;
        released = [];
        for (const resolve of wake) resolve();
      }
    }
  };
  await Promise.all(Array.from({ length: width }, async (_, i) => (i === 0 ? lane() : sleep(i * staggerMs).then(lane))));
}

async function runTurn(base: string, benchSecret: string, turn: Turn): Promise<void> {
  const secret = turn.secret ?? benchSecret;
  turn.postAt = nowMs();
  const admitted = await api<{ executionId: string; admission: string }>(base, 'POST', `/v1/chats/${turn.chatId}/messages`, secret, { content: turn.marker }, 202);
  turn.admittedAt = nowMs();
  turn.admission = admitted.admission;
  turn.executionId = admitted.executionId;
  await observe(base, secret, turn);
}

// ---- the billing comparison ----------------------------------------------------------------------

interface BenchOrganization {
  readonly id: string;
  readonly secret: string;
  readonly botId: string;
  readonly chats: string[];
}

/** An organization with the fake model, a Bot and `chats` Chats, through the public API. */
async function benchOrganization(base: string, adminToken: string, fake: FakeModelServer, name: string, chats: number): Promise<BenchOrganization> {
  const org = await api<{ organization: { id: string }; apiKey: { secret: string } }>(base, 'POST', '/v1/organizations', adminToken, { name }, 201);
  const secret = org.apiKey.secret;
  await api(base, 'POST', '/v1/model-providers', secret, { name: 'fake', kind: 'openai-compatible', baseUrl: fake.baseUrl }, 201);
  const bot = await api<{ id: string }>(base, 'POST', '/v1/bots', secret, { name: 'Bench bot', model: 'fake/gpt-bench', instructions: 'x' }, 201);
  const ids: string[] = [];
  for (let i = 0; i < chats; i++) ids.push((await api<{ id: string }>(base, 'POST', '/v1/chats', secret, { botId: bot.id }, 201)).id);
  return { id: org.organization.id, secret, botId: bot.id, chats: ids };
}

/**
 * The same workload on two organizations, interleaved Turn by Turn: one with credits (priced by
 * the platform), a money budget for the organization and a token budget for its Bot, none of
 * them binding, so every message runs the admission checks and every model call fits its
 * `max_tokens` to all three (decision 081); the other with none. Unmeasured Turns of both warm
 * the billed path first. Prints the `turn billing:` line; returns the failed Turns.
 */
async function compareBilling(base: string, adminToken: string, fake: FakeModelServer): Promise<string[]> {
  const plain = await benchOrganization(base, adminToken, fake, 'Bench without billing', C);
  const billed = await benchOrganization(base, adminToken, fake, 'Bench with billing', C);
  await api(base, 'POST', `/v1/platform/organizations/${billed.id}/credits`, adminToken, { amountMicros: Number.MAX_SAFE_INTEGER, reason: 'bench' }, 201);
  await api(base, 'PUT', `/v1/platform/organizations/${billed.id}/prices/${encodeURIComponent('fake/gpt-bench')}`, adminToken, { inputPerMillionMicros: 1_000, outputPerMillionMicros: 2_000 }, 200);
  await api(base, 'POST', '/v1/budgets', billed.secret, { scope: { kind: 'organization' }, period: 'month', limitMicros: Number.MAX_SAFE_INTEGER }, 201);
  await api(base, 'POST', '/v1/budgets', billed.secret, { scope: { kind: 'bot', id: billed.botId }, period: 'day', limitTokens: Number.MAX_SAFE_INTEGER }, 201);
  const interleaved = (prefix: string, n: number): Turn[] =>
    Array.from({ length: n }, (_, k) => {
      const org = k % 2 === 0 ? plain : billed;
      return newTurn(k, `${prefix}-${k}`, org.chats[Math.floor(k / 2) % org.chats.length]!, org.secret);
    });
  const warm = interleaved('billing-warmup', 10 * C);
  await runTurns(base, plain.secret, warm, C, 0);
  const turns = interleaved('billing', BILLING_COMPARE);
  const stagger = ARRIVALS === 'staggered' ? (50 + 5 * TOKENS) / C : 0;
  await runTurns(base, plain.secret, turns, C, stagger);
  const failures = [...check(warm, fake), ...check(turns, fake)];
  const side = (org: BenchOrganization) => turns.filter((t) => t.secret === org.secret && t.timing !== undefined && !t.timing.aborted);
  const figures = (of: Turn[]) => ({
    admit: of.map((t) => t.admittedAt - t.postAt),
    toModel: of.map((t) => t.timing!.receivedAt - t.postAt),
    total: of.map((t) => t.endedAt - t.postAt),
  });
  const without = figures(side(plain));
  const withBilling = figures(side(billed));
  const pair = (name: string, a: number[], b: number[], digits: number) =>
    `${name} p50 without=${pct(a, 50).toFixed(digits)} with=${pct(b, 50).toFixed(digits)} p99 without=${pct(a, 99).toFixed(digits)} with=${pct(b, 99).toFixed(digits)}`;
  process.stdout.write(
    [
      `turn billing: turns=${turns.length} (interleaved; with = credits, a money and a token budget, none binding)`,
      pair('post_202_ms', without.admit, withBilling.admit, 1),
      pair('post_to_model_request_ms', without.toModel, withBilling.toModel, 1),
      pair('turn_ms', without.total, withBilling.total, 0),
    ].join(' ') + '\n',
  );
  return failures;
}

/** Follows the execution's SSE stream to `execution.ended`, timing the first delta and the end. */
function observe(base: string, secret: string, turn: Turn): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = httpRequest(
      `${base}/v1/executions/${turn.executionId}/events`,
      { method: 'GET', agent, headers: { authorization: `Bearer ${secret}`, accept: 'text/event-stream' } },
      (res: IncomingMessage) => {
        turn.streamOpenAt = nowMs();
        if (res.statusCode !== 200) {
          reject(new Error(`events of ${turn.executionId}: HTTP ${res.statusCode}`));
          res.resume();
          return;
        }
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (piece: string) => {
          const at = nowMs();
          buffer += piece;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const dataLine = block.split('\n').find((line) => line.startsWith('data: '));
            if (dataLine === undefined) continue; // a comment (`: connected`, keepalive)
            const event = JSON.parse(dataLine.slice(6)) as { type?: string; text?: string; state?: string };
            turn.events++;
            if (event.type === 'text.delta') {
              if (turn.deltas === 0) turn.firstDeltaAt = at;
              turn.deltas++;
              turn.text += event.text ?? '';
            } else if (event.type === 'execution.ended') {
              turn.endedAt = at;
              turn.endState = event.state ?? '';
            }
          }
        });
        res.on('end', () => (Number.isNaN(turn.endedAt) ? reject(new Error(`events of ${turn.executionId} closed before execution.ended`)) : resolve()));
        res.on('error', reject);
      },
    );
    req.setTimeout(TURN_TIMEOUT_MS, () => req.destroy(new Error(`events of ${turn.executionId}: no end within ${TURN_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end();
  });
}

function check(turns: Turn[], fake: FakeModelServer): string[] {
  const failures: string[] = [];
  for (const turn of turns) {
    turn.timing = fake.timingFor(turn.marker);
    const what = `${turn.marker} (execution ${turn.executionId})`;
    if (turn.admission !== 'started') failures.push(`${what}: admission ${turn.admission}, expected started`);
    if (turn.endState !== 'completed') failures.push(`${what}: ended ${turn.endState || '(no end)'}`);
    if (turn.text !== fake.reply) failures.push(`${what}: streamed ${turn.text.length} chars in ${turn.deltas} deltas, not the model's ${fake.reply.length}-char reply`);
    const requests = fake.requestsFor(turn.marker);
    if (requests !== 1 || turn.timing === undefined || turn.timing.aborted) failures.push(`${what}: ${requests} model request(s), last ${turn.timing?.aborted ? 'aborted' : 'complete'}`);
  }
  return failures;
}

// ---- the report --------------------------------------------------------------------------------

function report(
  turns: Turn[],
  wallS: number,
  rss: { rssMb: number; hwmMb: number },
  before: DbCounters,
  after: DbCounters,
  logLines: number,
  fake: FakeModelServer,
  cpu: CpuSnapshot,
): void {
  const timed = turns.filter((t) => t.timing !== undefined && !t.timing.aborted);
  const firstAdded = timed.map((t) => t.firstDeltaAt - t.timing!.firstTokenAt);
  const endAdded = timed.map((t) => t.endedAt - t.timing!.lastByteAt);
  const rows = (after.rows - before.rows) / N;
  const line = [
    'turn:',
    `turns/s=${(N / wallS).toFixed(2)}`,
    `first_token_added_ms p50=${pct(firstAdded, 50).toFixed(1)} p99=${pct(firstAdded, 99).toFixed(1)}`,
    `end_added_ms p50=${pct(endAdded, 50).toFixed(1)} p99=${pct(endAdded, 99).toFixed(1)}`,
    `rss_mb=${rss.rssMb.toFixed(0)}`,
    `db_writes_per_turn=${rows.toFixed(1)} (rows: n_tup_ins+n_tup_upd+n_tup_del of pg_stat_user_tables)`,
  ];
  process.stdout.write(`${line.join(' ')}\n`);
  const ok = (value: number, target: number): string => (value <= target ? 'met' : 'MISSED');
  process.stdout.write(
    `targets: first_token_added_ms p50<=${TARGET_FIRST_P50} (${ok(pct(firstAdded, 50), TARGET_FIRST_P50)}) p99<=${TARGET_FIRST_P99} (${ok(pct(firstAdded, 99), TARGET_FIRST_P99)})\n`,
  );
  // Breakdown (not part of the workload's line): where a Turn's time goes, and what it writes.
  const admit = turns.map((t) => t.admittedAt - t.postAt);
  const toModel = timed.map((t) => t.timing!.receivedAt - t.postAt);
  const userFirst = timed.map((t) => t.firstDeltaAt - t.postAt);
  const total = turns.map((t) => t.endedAt - t.postAt);
  const modelMs = timed.map((t) => t.timing!.lastByteAt - t.timing!.receivedAt);
  process.stdout.write(
    [
      'turn detail:',
      `wall_s=${wallS.toFixed(2)}`,
      `post_202_ms p50=${pct(admit, 50).toFixed(1)} p99=${pct(admit, 99).toFixed(1)}`,
      `post_to_model_request_ms p50=${pct(toModel, 50).toFixed(1)} p99=${pct(toModel, 99).toFixed(1)}`,
      `post_to_first_delta_ms p50=${pct(userFirst, 50).toFixed(1)} p99=${pct(userFirst, 99).toFixed(1)}`,
      `turn_ms p50=${pct(total, 50).toFixed(0)} p99=${pct(total, 99).toFixed(0)} (model stream ${pct(modelMs, 50).toFixed(0)})`,
      `events/turn=${(turns.reduce((s, t) => s + t.events, 0) / N).toFixed(1)}`,
      `rss_peak_mb=${rss.hwmMb.toFixed(0)}`,
      `commits/turn=${((after.commits - before.commits) / N).toFixed(1)} (xact_commit, read-only included)`,
      `deadlocks=${after.deadlocks - before.deadlocks}`,
      `wal_kb/turn=${((after.walBytes - before.walBytes) / 1024 / N).toFixed(1)}`,
      `wal_records/turn=${((after.walRecords - before.walRecords) / N).toFixed(0)}`,
      `log_lines/turn=${(logLines / N).toFixed(1)}`,
      `model_requests=${fake.timings.length - WARMUP}`,
    ].join(' ') + '\n',
  );
  const tables = [...after.byTable.entries()]
    .map(([table, n]) => [table, (n - (before.byTable.get(table) ?? 0)) / N] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  // CPU seconds over the measured window; the machine's other load shows as `other` (a shared machine skews the figures).
  const other = cpu.machineBusy - cpu.server - cpu.bench - cpu.postgres;
  process.stdout.write(
    `turn cpu (s over ${wallS.toFixed(1)} s, ${cpu.cores} cores): server=${cpu.server.toFixed(1)} postgres=${cpu.postgres.toFixed(1)} ` +
      `bench(fake model+client)=${cpu.bench.toFixed(1)} other=${Math.max(0, other).toFixed(1)} machine_busy=${((100 * cpu.machineBusy) / cpu.machineTotal).toFixed(0)}% ` +
      `per_turn_ms server=${((cpu.server * 1000) / N).toFixed(1)} (target <=15) postgres=${((cpu.postgres * 1000) / N).toFixed(1)}\n`,
  );
  process.stdout.write(`turn rows/turn by table: ${tables.map(([table, n]) => `${table}=${n.toFixed(2)}`).join(' ')}\n`);
}

/** The same percentile as the engine bench: the value at floor(p% · n) of the sorted sample. */
function pct(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}


async function dbCounters(db: Client): Promise<DbCounters> {
  const tables = await db.query<{ relname: string; n: string }>(
    'SELECT relname, (n_tup_ins + n_tup_upd + n_tup_del)::text AS n FROM pg_stat_user_tables',
  );
  const database = await db.query<{ commits: string; deadlocks: string }>(
    'SELECT xact_commit::text AS commits, deadlocks::text AS deadlocks FROM pg_stat_database WHERE datname = current_database()',
  );
  const wal = await db.query<{ bytes: string; records: string }>('SELECT wal_bytes::text AS bytes, wal_records::text AS records FROM pg_stat_wal');
  const byTable = new Map(tables.rows.map((r) => [r.relname, Number(r.n)]));
  return {
    rows: [...byTable.values()].reduce((s, n) => s + n, 0),
    commits: Number(database.rows[0]!.commits),
    deadlocks: Number(database.rows[0]!.deadlocks),
    walBytes: Number(wal.rows[0]!.bytes),
    walRecords: Number(wal.rows[0]!.records),
    byTable,
  };
}

// ---- CPU accounting (Linux /proc) ------------------------------------------------------------------

interface CpuSnapshot {
  server: number;
  bench: number;
  postgres: number;
  machineBusy: number;
  machineTotal: number;
  cores: number;
}

const TICKS_PER_S = 100;

/** utime+stime (and the reaped children's) of one process, in s; null when it is gone. */
function procStat(pid: number): { ppid: number; self: number; children: number } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): ppid is field 4, utime..cstime fields 14..17.
  const at = (field: number): number => Number(fields[field - 3]);
  return { ppid: at(4), self: (at(14) + at(15)) / TICKS_PER_S, children: (at(16) + at(17)) / TICKS_PER_S };
}

/** The server's, this process's, and the cluster's CPU (the postmaster, its live children and the reaped ones). */
function cpuSnapshot(serverPid: number, postmaster: number): CpuSnapshot {
  let postgres = 0;
  const master = procStat(postmaster);
  if (master) postgres += master.self + master.children;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat?.ppid === postmaster) postgres += stat.self;
  }
  const usage = process.cpuUsage();
  const machine = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = machine.slice(0, 8).reduce((s, n) => s + n, 0) / TICKS_PER_S;
  const idle = ((machine[3] ?? 0) + (machine[4] ?? 0)) / TICKS_PER_S;
  return {
    server: procStat(serverPid)?.self ?? Number.NaN,
    bench: (usage.user + usage.system) / 1e6,
    postgres,
    machineBusy: total - idle,
    machineTotal: total,
    cores: availableParallelism(),
  };
}

function cpuDelta(a: CpuSnapshot, b: CpuSnapshot): CpuSnapshot {
  return {
    server: b.server - a.server,
    bench: b.bench - a.bench,
    postgres: b.postgres - a.postgres,
    machineBusy: b.machineBusy - a.machineBusy,
    machineTotal: b.machineTotal - a.machineTotal,
    cores: b.cores,
  };
}

process.stdout.write(`turn workload: N=${N} chats=${CHATS} C=${C} tokens=${TOKENS} (50 ms first token, 5 ms/token) warm-up=${WARMUP} arrivals=${ARRIVALS}\n`);
const runStarted = Date.now();
main().then(
  (code) => {
    process.stdout.write(`turn bench runtime ${((Date.now() - runStarted) / 1000).toFixed(1)} s\n`);
    process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);

/** An OTLP/HTTP endpoint that reads each export and answers 200 (what a collector costs the server, not what it stores). */
function traceSink(): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

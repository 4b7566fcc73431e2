/**
 * The `memory` workload of docs/benchmarks.md.
 *
 * - `memory select`: context selection (MemoryStore.select, what a Turn of a Bot with memory runs
 *   before its first model call) for one Bot with ITEMS items (default 10,000) on an embedded
 *   PostgreSQL: QUERIES queries (default 500) of 12 words each from the items' vocabulary, a
 *   2,000-token budget, one at a time. Latency p50 and p99 (target: p50 <= 20 ms).
 * - `memory learn`: learning throughput end to end. One server process (`main.js serve`) and a
 *   scripted model that answers learning prompts with two items; LEARNERS Chats (default 40) of a
 *   Bot with `memory.learn` each get one message at once, so as many learning executions run:
 *   shared permit, model call through the call log, items and cursor under the exclusive lock.
 *   Throughput is learning executions ended per second, from the first one created to the last
 *   one ended (the executions table's times).
 *
 * Exits non-zero unless every learning execution completed and added its items.
 */
import '../apps/server/src/module-paths';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '@openbot/domain';
import { Keyring, Sealer } from '@openbot/platform';
import { Client, Pool } from 'pg';
import type { RuntimeConfig } from '../libs/platform/src/config/runtime-config';
import { Database } from '../libs/platform/src/database/sql';
import { MemoryStore } from '../libs/features/src/memory/memory-store';
import { startBenchDatabase } from './bench-database';
import { api, startServer, type ServerProcess } from './server-process';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 10_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 500);
const LEARNERS = Number(process.env.BENCH_LEARNERS ?? 40);
const BUDGET_TOKENS = 2_000;

/** A vocabulary of made-up words: item texts draw from it, so queries match some items and not others. */
const VOCABULARY = Array.from({ length: 3_000 }, (_, i) => `w${i.toString(36)}x`);
const TAGS = Array.from({ length: 60 }, (_, i) => `topic${i}`);

function random(n: number): number {
  return Math.floor(Math.random() * n);
}
const words = (n: number): string => Array.from({ length: n }, () => VOCABULARY[random(VOCABULARY.length)]!).join(' ');
const pct = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

async function selection(url: string): Promise<void> {
  const pool = new Pool({ connectionString: url, max: 4 });
  try {
    const masterKey = { id: 'bench', key: randomBytes(32) };
    const store = new MemoryStore(new Database(pool), new Sealer(new Keyring(masterKey)), { masterKey } as RuntimeConfig);
    const organizationId = newId();
    const botId = newId();
    await pool.query('INSERT INTO organizations (id, name) VALUES ($1, $2)', [organizationId, 'Memory bench']);
    await pool.query(`INSERT INTO bots (id, organization_id, name, model, instructions, tools) VALUES ($1, $2, 'B', 'fake/m', '', '[]')`, [botId, organizationId]);
    const loadStart = performance.now();
    for (let done = 0; done < ITEMS; done += 500) {
      await store.changing(botId, async (tx) => {
        for (let i = done; i < Math.min(ITEMS, done + 500); i++) {
          const tags = Array.from({ length: random(3) }, () => TAGS[random(TAGS.length)]!);
          await store.insert(tx, organizationId, botId, newId(), { content: words(20 + random(20)), tags: [...new Set(tags)], access: { kind: 'bot' }, sources: [] });
        }
      });
    }
    const loadS = (performance.now() - loadStart) / 1000;
    await pool.query('ANALYZE memory_items');
    const reader = { kind: 'member' as const, memberId: newId(), role: 'member' as const };
    const latencies: number[] = [];
    let selected = 0;
    for (let q = 0; q < QUERIES + 20; q++) {
      const text = `${words(12)} ${TAGS[random(TAGS.length)]!}`;
      const start = performance.now();
      const result = await store.select({ organizationId, botId, reader, text, budgetTokens: BUDGET_TOKENS });
      const ms = performance.now() - start;
      // The first 20 warm the pool's connections and PostgreSQL's plan cache.
      if (q >= 20) {
        latencies.push(ms);
        selected += result.ids.length;
      }
    }
    latencies.sort((a, b) => a - b);
    const p50 = pct(latencies, 50);
    process.stdout.write(
      `memory select: items=${ITEMS} queries=${QUERIES} budget_tokens=${BUDGET_TOKENS} selected_avg=${(selected / QUERIES).toFixed(1)} ` +
        `p50_ms=${p50.toFixed(2)} p99_ms=${pct(latencies, 99).toFixed(2)} load_items_per_s=${(ITEMS / loadS).toFixed(0)} target_p50<=20ms=${p50 <= 20 ? 'met' : 'MISSED'}\n`,
    );
  } finally {
    await pool.end();
  }
}

/** A model that answers learning prompts with two items and anything else with a short text, streamed as chat completions. */
async function startLearningModel(): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (p: Buffer) => parts.push(p));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { messages: Array<{ role: string; content: string }> };
      const learning = body.messages.some((m) => m.role === 'system' && m.content.startsWith('You maintain the long-term memory'));
      const text = learning ? JSON.stringify({ memories: [{ content: `Fact ${words(8)}`, tags: ['bench'] }, { content: `Preference ${words(8)}`, tags: ['bench'] }] }) : 'Noted.';
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const usage = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 50, completion_tokens: 30, total_tokens: 80 } })}\n\n`;
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.end(chunk({ role: 'assistant', content: '' }) + chunk({ content: text }) + chunk({}, 'stop') + usage + 'data: [DONE]\n\n');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function learning(url: string, work: string): Promise<boolean> {
  const model = await startLearningModel();
  let server: ServerProcess | null = null;
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    server = await startServer({ databaseUrl: url, work, logLevel: 'warn' });
    const org = await api<{ apiKey: { secret: string } }>(server.base, 'POST', '/v1/organizations', server.adminToken, { name: 'Learning bench' }, 201);
    const secret = org.apiKey.secret;
    await api(server.base, 'POST', '/v1/model-providers', secret, { name: 'fake', kind: 'openai-compatible', baseUrl: model.baseUrl }, 201);
    const bot = await api<{ id: string }>(server.base, 'POST', '/v1/bots', secret, { name: 'Learner', model: 'fake/m', memory: { enabled: false, learn: true } }, 201);
    const chats = await Promise.all(Array.from({ length: LEARNERS }, () => api<{ id: string }>(server!.base, 'POST', '/v1/chats', secret, { botId: bot.id }, 201)));
    await Promise.all(chats.map((chat, i) => api(server!.base, 'POST', `/v1/chats/${chat.id}/messages`, secret, { content: `Remember fact ${i}: ${words(10)}` }, 202)));
    // Wait for every learning execution to end (PostgreSQL is the source of truth; polled, as a benchmark may).
    for (;;) {
      const { rows } = await db.query<{ ended: number; all: number }>(`SELECT count(*) FILTER (WHERE state IN ('completed', 'failed', 'cancelled'))::int AS ended, count(*)::int AS all FROM executions WHERE workflow = 'memory.learn'`);
      if (rows[0]!.all === LEARNERS && rows[0]!.ended === LEARNERS) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const { rows } = await db.query<{ completed: number; span_s: number; items: number }>(
      `SELECT count(*) FILTER (WHERE state = 'completed')::int AS completed,
              extract(epoch FROM max(ended_at) - min(created_at))::float8 AS span_s,
              (SELECT count(*)::int FROM memory_items WHERE bot_id = $1) AS items
         FROM executions WHERE workflow = 'memory.learn'`,
      [bot.id],
    );
    const r = rows[0]!;
    process.stdout.write(`memory learn: learners=${LEARNERS} completed=${r.completed} items=${r.items} span_s=${r.span_s.toFixed(2)} learnings_per_s=${(LEARNERS / r.span_s).toFixed(1)}\n`);
    return r.completed === LEARNERS && r.items === 2 * LEARNERS;
  } finally {
    await db.end();
    await server?.stop();
    await model.close();
  }
}

async function main(): Promise<number> {
  const work = join(tmpdir(), `openbot-memory-bench-${process.pid}`);
  mkdirSync(work, { recursive: true });
  const { cluster, url } = await startBenchDatabase(work);
  try {
    await selection(url);
    return (await learning(url, work)) ? 0 : 1;
  } finally {
    await cluster.stop();
  }
}

process.stdout.write(`memory workload: items=${ITEMS} queries=${QUERIES} learners=${LEARNERS}\n`);
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);

/**
 * The `storage` workload (docs/benchmarks.md): how many database bytes a Turn costs, before and
 * after retention. One server on an embedded PostgreSQL; a scripted model streams 200 tokens per
 * reply. N Turns run (C at a time); the bytes of the tables a Turn writes are read with
 * `pg_total_relation_size`. The organization then keeps deltas and call results 1 day, the ended
 * executions are dated 2 days back (the benchmark's stand-in for two days passing), and the
 * retention schedule (every minute here) prunes them; the tables are compacted (VACUUM FULL) so
 * the figure is the live data a Turn leaves behind, not the free space PostgreSQL keeps for reuse.
 * Prints one line per state: bytes per Turn in all, and by table.
 */
import '../apps/server/src/module-paths';
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startBenchDatabase } from './bench-database';
import { FakeModelServer } from './fake-model';
import { agent, api, sleep, startServer, type ServerProcess } from './server-process';

const N = Number(process.env.BENCH_TURNS ?? 200);
const C = Number(process.env.BENCH_C ?? 10);
const TOKENS = 200;
/** The tables a Turn writes to. */
const TABLES = ['execution_events', 'execution_event_seqs', 'executions', 'execution_calls', 'chat_messages', 'chat_turns', 'usage_records', 'usage_holds', 'execution_limits'];
const FINAL = new Set(['completed', 'failed', 'cancelled', 'interrupted']);

async function main(): Promise<number> {
  const work = join(tmpdir(), `openbot-storage-bench-${process.pid}`);
  mkdirSync(work, { recursive: true });
  const { cluster, url } = await startBenchDatabase(work);
  let server: ServerProcess | null = null;
  let fake: FakeModelServer | null = null;
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    fake = await FakeModelServer.start({ tokens: TOKENS });
    server = await startServer({ databaseUrl: url, work, logLevel: 'warn', env: { OPENBOT_RETENTION_SCHEDULE: '* * * * *' } });
    const base = server.base;
    const org = await api<{ apiKey: { secret: string } }>(base, 'POST', '/v1/organizations', server.adminToken, { name: 'Storage' }, 201);
    const secret = org.apiKey.secret;
    await api(base, 'POST', '/v1/model-providers', secret, { name: 'fake', kind: 'openai-compatible', baseUrl: fake.baseUrl }, 201);
    const bot = await api<{ id: string }>(base, 'POST', '/v1/bots', secret, { name: 'Storage bot', model: 'fake/gpt-bench', instructions: 'x' }, 201);
    const chats = await Promise.all(Array.from({ length: C }, () => api<{ id: string }>(base, 'POST', '/v1/chats', secret, { botId: bot.id }, 201)));

    await compact(db);
    const empty = await sizes(db);
    let next = 0;
    const lane = async (chatId: string): Promise<void> => {
      while (next < N) {
        next += 1;
        const admitted = await api<{ executionId: string }>(base, 'POST', `/v1/chats/${chatId}/messages`, secret, { content: `turn ${next}` }, 202);
        for (;;) {
          const view = await api<{ state: string }>(base, 'GET', `/v1/executions/${admitted.executionId}`, secret, undefined, 200);
          if (FINAL.has(view.state)) break;
          await sleep(20);
        }
      }
    };
    await Promise.all(chats.map((chat) => lane(chat.id)));
    await compact(db);
    const before = await sizes(db);
    print('storage before_retention', N, empty, before);

    // Two days pass for the ended Turns; the organization keeps deltas and call results one day.
    await api(base, 'PUT', '/v1/retention', secret, { textDeltaDays: 1, callPayloadDays: 1 }, 200);
    await db.query(`UPDATE executions SET ended_at = ended_at - interval '2 days' WHERE ended_at IS NOT NULL AND workflow = 'chat.turn'`);
    const started = Date.now();
    for (;;) {
      const { rows } = await db.query<{ left: number }>(
        `SELECT count(*)::int AS left FROM executions WHERE workflow = 'chat.turn' AND (deltas_pruned_at IS NULL OR payloads_pruned_at IS NULL)`,
      );
      if (rows[0]!.left === 0) break;
      if (Date.now() - started > 180_000) throw new Error(`retention did not prune every Turn within 3 minutes (${rows[0]!.left} left)`);
      await sleep(1000);
    }
    await compact(db);
    const after = await sizes(db);
    print('storage after_retention', N, empty, after);
    return 0;
  } finally {
    await db.end().catch(() => undefined);
    agent.destroy();
    await server?.stop();
    await fake?.close();
    await cluster.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

async function compact(db: Client): Promise<void> {
  for (const table of TABLES) await db.query(`VACUUM FULL ${table}`);
}

async function sizes(db: Client): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of TABLES) {
    const { rows } = await db.query<{ bytes: string }>('SELECT pg_total_relation_size($1::regclass)::bigint AS bytes', [table]);
    out[table] = Number(rows[0]!.bytes);
  }
  return out;
}

function print(label: string, turns: number, empty: Record<string, number>, now: Record<string, number>): void {
  const per = (table: string) => (now[table]! - empty[table]!) / turns;
  const total = TABLES.reduce((sum, table) => sum + per(table), 0);
  const byTable = TABLES.map((table) => `${table}=${Math.round(per(table))}`).join(' ');
  process.stdout.write(`${label}: turns=${turns} bytes_per_turn=${Math.round(total)} ${byTable}\n`);
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

/**
 * The `failover` workload of docs/benchmarks.md: how long a user watches a dead stream when the
 * node running their Turn goes away. Two OpenBot servers (`main.js serve`, nodes `node-a` and
 * `node-b`) share one embedded PostgreSQL. Each trial posts a message to node-a, which admits the
 * Turn and streams it (a scripted model, bench/fake-model.ts: 300 tokens, one per 20 ms); a client
 * follows the Turn's SSE stream on node-b. After 20 deltas node-a is killed: `kill -9` (N trials)
 * or SIGTERM (N trials). The figure is the time from the signal to the client's first event of the
 * new attempt (an event whose `attempt` is higher than any seen before the signal). node-a is
 * started again between trials.
 *
 * A graceful stop lets a running phase finish within the drain time (OPENBOT_SHUTDOWN_TIMEOUT_MS),
 * so a SIGTERM'd Turn usually completes on its own node with no new attempt: the line reports how
 * many trials needed one, and for every trial the longest time without an event after the signal.
 *
 * Exits non-zero unless every trial ends `completed` with exactly one assistant reply, equal to
 * the model's.
 */
import '../apps/server/src/module-paths';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchDatabase } from './bench-database';
import { FakeModelServer, nowMs } from './fake-model';
import { agent, api, startServer, type ServerOptions, type ServerProcess } from './server-process';

const N = Number(process.env.BENCH_TRIALS ?? 10);
const TOKENS = Number(process.env.BENCH_TOKENS ?? 300);
const KILL_AFTER_DELTAS = 20;
const TRIAL_TIMEOUT_MS = 90_000;

interface Trial {
  readonly kind: 'kill -9' | 'SIGTERM';
  /** Signal to the new attempt's first event at the client, ms (NaN: the stream never needed one). */
  resumeMs: number;
  /** The longest time the client saw no event after the signal (the dead stream a user watches), ms. */
  maxGapMs: number;
  endState: string;
  replies: number;
  replyMatches: boolean;
}

async function main(): Promise<number> {
  const work = join(tmpdir(), `openbot-failover-bench-${process.pid}`);
  mkdirSync(work, { recursive: true });
  const { cluster, url } = await startBenchDatabase(work);
  const servers: ServerProcess[] = [];
  let fake: FakeModelServer | null = null;
  try {
    fake = await FakeModelServer.start({ tokens: TOKENS, firstTokenDelayMs: 50, tokenIntervalMs: 20 });
    const shared: Omit<ServerOptions, 'name'> = {
      databaseUrl: url,
      work,
      adminToken: `bench-admin-${randomBytes(12).toString('hex')}`,
      masterKey: `bench:${randomBytes(32).toString('base64')}`,
      logLevel: 'warn',
    };
    const startA = (): Promise<ServerProcess> => startServer({ ...shared, name: 'node-a', env: { OPENBOT_NODE_ID: 'node-a' } });
    let a = await startA();
    const b = await startServer({ ...shared, name: 'node-b', env: { OPENBOT_NODE_ID: 'node-b' } });
    servers.push(a, b);

    const org = await api<{ apiKey: { secret: string } }>(a.base, 'POST', '/v1/organizations', a.adminToken, { name: 'Failover' }, 201);
    const secret = org.apiKey.secret;
    await api(a.base, 'POST', '/v1/model-providers', secret, { name: 'fake', kind: 'openai-compatible', baseUrl: fake.baseUrl }, 201);
    const bot = await api<{ id: string }>(a.base, 'POST', '/v1/bots', secret, { name: 'Failover bot', model: 'fake/gpt-bench', instructions: 'x' }, 201);

    const trials: Trial[] = [];
    for (const kind of ['kill -9', 'SIGTERM'] as const) {
      for (let i = 0; i < N; i++) {
        const chat = await api<{ id: string }>(a.base, 'POST', '/v1/chats', secret, { botId: bot.id }, 201);
        trials.push(await trial(kind, a, b, secret, chat.id, fake.reply));
        a = await startA();
        servers.push(a);
      }
    }
    report(trials);
    const bad = trials.filter((t) => t.endState !== 'completed' || t.replies !== 1 || !t.replyMatches || (t.kind === 'kill -9' && Number.isNaN(t.resumeMs)));
    for (const t of bad) process.stderr.write(`failed trial (${t.kind}): ended ${t.endState}, ${t.replies} replies, reply ${t.replyMatches ? 'matches' : 'differs'}\n`);
    return bad.length === 0 ? 0 : 1;
  } finally {
    agent.destroy();
    for (const server of servers) await server.stop();
    await fake?.close();
    await cluster.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** One trial: a Turn admitted and streamed by `a`, followed on `b`; `a` gets `kind` after 20 deltas. */
async function trial(kind: Trial['kind'], a: ServerProcess, b: ServerProcess, secret: string, chatId: string, reply: string): Promise<Trial> {
  const admitted = await api<{ executionId: string }>(a.base, 'POST', `/v1/chats/${chatId}/messages`, secret, { content: `failover ${kind} ${chatId}` }, 202);
  const result: Trial = { kind, resumeMs: Number.NaN, maxGapMs: 0, endState: '', replies: 0, replyMatches: false };
  let signalledAt = Number.NaN;
  let lastAt = Number.NaN;
  let attemptBefore = 0;
  let deltas = 0;
  await follow(b.base, secret, admitted.executionId, (event) => {
    const attempt = typeof event.attempt === 'number' ? event.attempt : 0;
    const at = nowMs();
    if (!Number.isNaN(signalledAt)) result.maxGapMs = Math.max(result.maxGapMs, at - Math.max(lastAt, signalledAt));
    lastAt = at;
    if (Number.isNaN(signalledAt)) {
      attemptBefore = Math.max(attemptBefore, attempt);
      if (event.type === 'text.delta' && ++deltas === KILL_AFTER_DELTAS) {
        signalledAt = at;
        void a.kill(kind === 'kill -9' ? 'SIGKILL' : 'SIGTERM');
      }
    } else if (Number.isNaN(result.resumeMs) && attempt > attemptBefore) {
      result.resumeMs = at - signalledAt;
    }
    if (event.type === 'execution.ended') result.endState = String(event.state ?? '');
  });
  await a.kill('SIGKILL'); // a SIGTERM'd node may still be draining; the next trial starts a fresh one
  const messages = await api<{ data: Array<{ role: string; content: unknown }> }>(b.base, 'GET', `/v1/chats/${chatId}/messages`, secret, undefined, 200);
  const list = messages.data;
  const replies = list.filter((m) => m.role === 'assistant');
  result.replies = replies.length;
  result.replyMatches = replies.length === 1 && (typeof replies[0]!.content === 'string' ? replies[0]!.content : JSON.stringify(replies[0]!.content)).includes(reply);
  return result;
}

/** Follows an execution's SSE stream to `execution.ended`, handing each event to `onEvent`. */
function follow(base: string, secret: string, executionId: string, onEvent: (event: Record<string, unknown>) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = httpRequest(
      `${base}/v1/executions/${executionId}/events`,
      { method: 'GET', agent, headers: { authorization: `Bearer ${secret}`, accept: 'text/event-stream' } },
      (res: IncomingMessage) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`events of ${executionId}: HTTP ${res.statusCode}`));
        }
        res.setEncoding('utf8');
        let buffer = '';
        let ended = false;
        res.on('data', (piece: string) => {
          buffer += piece;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const dataLine = block.split('\n').find((line) => line.startsWith('data: '));
            if (dataLine === undefined) continue;
            const event = JSON.parse(dataLine.slice(6)) as Record<string, unknown>;
            onEvent(event);
            if (event.type === 'execution.ended') {
              ended = true;
              req.destroy();
              resolve();
            }
          }
        });
        res.on('end', () => (ended ? undefined : reject(new Error(`events of ${executionId} closed before execution.ended`))));
        res.on('error', (error) => (ended ? undefined : reject(error)));
      },
    );
    req.setTimeout(TRIAL_TIMEOUT_MS, () => req.destroy(new Error(`events of ${executionId}: no end within ${TRIAL_TIMEOUT_MS} ms`)));
    req.on('error', (error) => (error.message.includes('socket hang up') ? undefined : reject(error)));
    req.end();
  });
}

function report(trials: readonly Trial[]): void {
  const p50max = (values: number[]): string => {
    const sorted = values.filter((v) => !Number.isNaN(v)).sort((x, y) => x - y);
    // No value at all (no trial of the kind needed a new attempt): said as such, not as NaN.
    if (sorted.length === 0) return 'none';
    return `p50=${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} max=${sorted[sorted.length - 1]!.toFixed(0)}`;
  };
  for (const kind of ['kill -9', 'SIGTERM'] as const) {
    const of = trials.filter((t) => t.kind === kind);
    const ok = of.filter((t) => t.endState === 'completed' && t.replies === 1 && t.replyMatches).length;
    const handedOver = of.filter((t) => !Number.isNaN(t.resumeMs)).length;
    process.stdout.write(
      `failover ${kind === 'kill -9' ? 'kill9' : 'sigterm'}: trials=${of.length} completed_one_reply=${ok} new_attempts=${handedOver} ` +
        `resume_ms ${p50max(of.map((t) => t.resumeMs))} max_gap_ms ${p50max(of.map((t) => t.maxGapMs))}\n`,
    );
  }
}

process.stdout.write(`failover workload: N=${N} per kind, tokens=${TOKENS} (20 ms/token), signal after ${KILL_AFTER_DELTAS} deltas\n`);
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventBody } from '../../support/chat-fixture';

/**
 * Helpers of the chat crash tests: real server processes (`dist/apps/server/src/main.js serve`,
 * compiled by `npm run build`) on one shared test database, and a small HTTP client of the
 * public API. Every node of a test shares the master key (B opens what A sealed) and the admin
 * token.
 */

const ROOT = join(__dirname, '..', '..', '..');
export const SERVER_MAIN = join(ROOT, 'dist', 'apps', 'server', 'src', 'main.js');

/** What every node of one test run shares. */
export const MASTER_KEY = `test1:${randomBytes(32).toString('base64')}`;
export const ADMIN_TOKEN = `test-admin-${randomBytes(12).toString('hex')}`;

export interface ServerNodeOptions {
  readonly databaseUrl: string;
  readonly nodeId: string;
  /** Execution lease in seconds (OPENBOT_LEASE_SECONDS): a dead owner's work is taken over after about this long. */
  readonly leaseSeconds: number;
  /** `OPENBOT_FAULTS` of this node (engine fault points, e.g. `call.result.committed=kill@step:2`). */
  readonly faults?: string;
  readonly startTimeoutMs?: number;
  /** More environment for this node (e.g. the S3 variables of a test's s3rver). */
  readonly env?: Readonly<Record<string, string>>;
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

const children = new Set<ChildProcess>();
const dataDirs: string[] = [];

/** A running `main.js serve` process. */
export class ServerNode {
  private out = '';
  private err = '';
  exit: Exit | null = null;
  readonly exited: Promise<Exit>;
  base = '';

  constructor(
    readonly nodeId: string,
    readonly child: ChildProcess,
  ) {
    const keep = (chunk: string): void => {
      // Debugging aid: CHAT_NODE_LOG=/tmp/file keeps every node's output (it dies with a failed test otherwise).
      if (process.env.CHAT_NODE_LOG) appendFileSync(process.env.CHAT_NODE_LOG, chunk.replace(/^/gm, `[${nodeId}] `));
    };
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.out += chunk;
      keep(chunk);
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.err += chunk;
      keep(chunk);
    });
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        children.delete(child);
        this.exit = { code, signal };
        resolve({ code, signal });
      }),
    );
  }

  get stdout(): string {
    return this.out;
  }

  get stderr(): string {
    return this.err;
  }

  /** The last lines of its output, for failure messages. */
  tail(lines = 40): string {
    return `[${this.nodeId} stdout]\n${this.out.split('\n').slice(-lines).join('\n')}\n[${this.nodeId} stderr]\n${this.err.split('\n').slice(-lines).join('\n')}`;
  }

  /** kill -9 (or another signal); resolves when the process is gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<Exit> {
    if (this.exit === null) this.child.kill(signal);
    return this.exited;
  }
}

/** Starts `main.js serve` against `databaseUrl` and waits for its banner and `/readyz`. */
export async function startServerNode(options: ServerNodeOptions): Promise<ServerNode> {
  if (!existsSync(SERVER_MAIN)) throw new Error(`${SERVER_MAIN} is missing: run \`npm run build\` first (\`npm test\` builds before jest)`);
  const dataDir = join(tmpdir(), `openbot-chat-crash-${process.pid}-${options.nodeId}-${randomBytes(4).toString('hex')}`);
  dataDirs.push(dataDir);
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith('OPENBOT_') || name.startsWith('S3_') || ['DATABASE_URL', 'NODE_ENV', 'PORT', 'HOST', 'LOG_LEVEL', 'OBJECT_STORE'].includes(name)) delete env[name];
  }
  Object.assign(env, {
    DATABASE_URL: options.databaseUrl,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    OPENBOT_DATA_DIR: dataDir,
    OPENBOT_NODE_ID: options.nodeId,
    OPENBOT_MASTER_KEY: MASTER_KEY,
    OPENBOT_ADMIN_TOKEN: ADMIN_TOKEN,
    OPENBOT_LEASE_SECONDS: String(options.leaseSeconds),
    // The fake model server listens on 127.0.0.1.
    OPENBOT_EGRESS_ALLOW: '127.0.0.1',
    OPENBOT_SHUTDOWN_TIMEOUT_MS: '2000',
    ...(options.faults !== undefined ? { OPENBOT_FAULTS: options.faults } : {}),
    ...options.env,
  });
  const child = spawn(process.execPath, [SERVER_MAIN, 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const node = new ServerNode(options.nodeId, child);
  const timeoutMs = options.startTimeoutMs ?? 30_000;
  node.base = await waitUntil(
    async () => {
      if (node.exit !== null) throw new Error(`${node.nodeId} exited (${JSON.stringify(node.exit)}) before its banner\n${node.tail()}`);
      const api = /^\s*API\s+(http:\/\/127\.0\.0\.1:\d+)\s*$/m.exec(node.stdout);
      return api?.[1];
    },
    timeoutMs,
    () => `${node.nodeId}: no banner\n${node.tail()}`,
    50,
  );
  await waitUntil(
    async () => {
      if (node.exit !== null) throw new Error(`${node.nodeId} exited (${JSON.stringify(node.exit)}) before it was ready\n${node.tail()}`);
      const res = await fetch(`${node.base}/readyz`).catch(() => null);
      return res?.status === 200 ? true : undefined;
    },
    timeoutMs,
    () => `${node.nodeId}: /readyz never answered 200\n${node.tail()}`,
    100,
  );
  return node;
}

/** Kills every server node still running and removes their data dirs (afterAll; safe after a failure). */
export async function stopAllServerNodes(): Promise<void> {
  const waiting: Array<Promise<void>> = [];
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      waiting.push(new Promise((resolve) => child.once('exit', () => resolve())));
      child.kill('SIGKILL');
    }
  }
  await Promise.all(waiting);
  for (const dir of dataDirs.splice(0)) await rm(dir, { recursive: true, force: true });
}

/** Polls `probe` until it answers something other than undefined. */
export async function waitUntil<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: () => string, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what()}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

// ---- the public API over real HTTP ----------------------------------------------------------

export interface ApiResponse<T> {
  readonly status: number;
  readonly body: T;
}

/** One JSON request to a node; answers status and parsed body (fails on a non-JSON body). */
export async function api<T = Record<string, unknown>>(
  node: ServerNode,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  options: { token: string; body?: unknown; headers?: Record<string, string> },
): Promise<ApiResponse<T>> {
  const res = await fetch(`${node.base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${options.token}`,
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
  });
  const text = await res.text();
  let body: T;
  try {
    body = (text === '' ? null : JSON.parse(text)) as T;
  } catch {
    throw new Error(`${method} ${path} on ${node.nodeId}: not JSON (${res.status}): ${text.slice(0, 500)}`);
  }
  return { status: res.status, body };
}

/** Like `api`, but fails unless the status is `expected`. */
export async function expectApi<T = Record<string, unknown>>(
  expected: number,
  node: ServerNode,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  options: { token: string; body?: unknown; headers?: Record<string, string> },
): Promise<T> {
  const res = await api<T>(node, method, path, options);
  if (res.status !== expected) throw new Error(`${method} ${path} on ${node.nodeId}: expected ${expected}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

export interface ChatSetup {
  readonly secret: string;
  readonly organizationId: string;
  readonly botId: string;
  readonly chatId: string;
}

/** An organization (through the admin token), a provider pointing at the fake model, a Bot (with `tools`) and a Chat. */
export async function createChat(node: ServerNode, modelBaseUrl: string, tools: readonly unknown[] = []): Promise<ChatSetup> {
  const org = await expectApi<{ organization: { id: string }; apiKey: { secret: string } }>(201, node, 'POST', '/v1/organizations', {
    token: ADMIN_TOKEN,
    body: { name: `Crash ${randomBytes(3).toString('hex')}` },
  });
  const token = org.apiKey.secret;
  await expectApi(201, node, 'POST', '/v1/model-providers', { token, body: { name: 'fake', kind: 'openai-compatible', baseUrl: modelBaseUrl } });
  const bot = await expectApi<{ id: string }>(201, node, 'POST', '/v1/bots', { token, body: { name: 'Bot', model: 'fake/gpt-test', instructions: 'Be brief.', tools } });
  const chat = await expectApi<{ id: string }>(201, node, 'POST', '/v1/chats', { token, body: { botId: bot.id } });
  return { secret: token, organizationId: org.organization.id, botId: bot.id, chatId: chat.id };
}

/** A member (role `member`) added through the API by the owner's key; answers its ID and its own first API key. */
export async function addMember(node: ServerNode, ownerToken: string): Promise<{ memberId: string; secret: string }> {
  const added = await expectApi<{ member: { id: string; role: string }; apiKey: { secret: string } }>(201, node, 'POST', '/v1/members', {
    token: ownerToken,
    body: { role: 'member', name: `Member ${randomBytes(3).toString('hex')}` },
  });
  if (added.member.role !== 'member') throw new Error(`added a ${added.member.role}, not a member`);
  return { memberId: added.member.id, secret: added.apiKey.secret };
}

interface EventPage {
  events: EventBody[];
  next: number;
  ended: boolean;
}

/**
 * Reads an execution's events through the JSON long poll of `node` until `done(events)` holds
 * or the execution ended; fails when `node` exits meanwhile.
 */
export async function readEvents(
  node: ServerNode,
  token: string,
  executionId: string,
  done: (events: readonly EventBody[], ended: boolean) => boolean,
  timeoutMs: number,
): Promise<{ events: EventBody[]; ended: boolean }> {
  const events: EventBody[] = [];
  const deadline = Date.now() + timeoutMs;
  let after = 0;
  let ended = false;
  for (;;) {
    if (node.exit !== null) throw new Error(`${node.nodeId} exited (${JSON.stringify(node.exit)}) while events were read\n${node.tail()}`);
    if (done(events, ended) || ended) return { events, ended };
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`events of ${executionId} not as expected within ${timeoutMs} ms: ${JSON.stringify(events)}\n${node.tail()}`);
    const wait = Math.max(1, Math.min(2, Math.floor(left / 1000)));
    const page = await expectApi<EventPage>(200, node, 'GET', `/v1/executions/${executionId}/events?after=${after}&wait=${wait}`, { token });
    events.push(...page.events);
    after = page.next;
    ended = page.ended;
  }
}

/**
 * Waits until every recovery job of the ended execution `executionId` has run: none waits any more
 * that is due within `horizonSeconds` of its end (a takeover arms one 2×lease ahead; a Turn's
 * deadline timer is due much later and, like these, finds the execution ended). After that no
 * node has a reason to touch it again, so "nothing more happened" is read at a known end, not
 * after a sleep. A job a killed node had fetched stays `active` for good and is not waited for.
 */
export async function jobsSettled(query: <T>(sql: string, params?: unknown[]) => Promise<T[]>, executionId: string, horizonSeconds: number, timeoutMs: number): Promise<void> {
  await waitUntil(
    async () => {
      const [row] = await query<{ ended: boolean; open: number }>(
        `SELECT e.ended_at IS NOT NULL AS ended,
                (SELECT count(*)::int FROM pgboss.job j
                  WHERE j.name = 'execution-advance' AND j.data->>'executionId' = $1::text AND j.state IN ('created', 'retry')
                    AND j.start_after <= e.ended_at + make_interval(secs => $2)) AS open
           FROM executions e WHERE e.id = $1::uuid`,
        [executionId, horizonSeconds],
      );
      return row?.ended === true && row.open === 0 ? true : undefined;
    },
    timeoutMs,
    () => `recovery jobs of ${executionId} still waiting`,
    200,
  );
}

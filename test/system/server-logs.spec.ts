import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { waitUntil } from './chat/server-node';

/**
 * How the compiled server (`main.js serve`) writes its logs, seen from outside the process:
 * on a pseudo-terminal (util-linux `script`, as a developer's terminal) in development it prints
 * pino-pretty's lines; into a pipe it prints one JSON object a line (LOG_FORMAT=auto, docs/operating.md).
 */
const ROOT = join(__dirname, '..', '..');
const MAIN = join(ROOT, 'dist', 'apps', 'server', 'src', 'main.js');
const SCRIPT = '/usr/bin/script';
const TIMEOUT_MS = 30_000;
/* eslint-disable no-control-regex -- terminal colour codes are what these two match */
const ANSI = /\x1b\[[0-9;]*m/g;
const COLOURED = /\x1b\[[0-9;]*m/;
/* eslint-enable no-control-regex */

jest.setTimeout(120_000);

interface Running {
  readonly child: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr; on a terminal they are one stream). */
  readonly output: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

let database: TestDatabase;
const children = new Set<ChildProcess>();
const dataDirs: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
  await database?.drop();
});

/** The parent's environment without the settings under test, pointed at the test database. */
function serverEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith('OPENBOT_') || name.startsWith('S3_') || ['DATABASE_URL', 'NODE_ENV', 'PORT', 'HOST', 'LOG_LEVEL', 'LOG_FORMAT', 'OBJECT_STORE', 'NO_COLOR', 'FORCE_COLOR', 'SHELL'].includes(name)) delete env[name];
  }
  const dataDir = join(tmpdir(), `openbot-logs-${process.pid}-${randomBytes(4).toString('hex')}`);
  dataDirs.push(dataDir);
  return { ...env, DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', OPENBOT_DATA_DIR: dataDir, TERM: 'xterm-256color' };
}

function launch(command: string, args: readonly string[]): Running {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (\`npm test\` builds before running jest).`);
  const child = spawn(command, [...args], { cwd: ROOT, env: serverEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, output: () => output, exited };
}

/** Waits for the banner, asks /healthz once, and waits for the request's log line to appear. */
async function requestAndWaitForLog(server: Running, logged: (lines: string[]) => boolean): Promise<string[]> {
  const base = await waitUntil(
    async () => /^\s*API\s+(http:\/\/127\.0\.0\.1:\d+)\s*$/m.exec(server.output().replaceAll('\r', ''))?.[1],
    TIMEOUT_MS,
    () => `no banner:\n${server.output()}`,
    50,
  );
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
  const lines = (): string[] => server.output().replaceAll('\r', '').split('\n');
  await waitUntil(async () => (logged(lines()) ? true : undefined), TIMEOUT_MS, () => `no request log line:\n${server.output()}`, 50);
  return lines();
}

describe('server logs on a terminal and into a pipe (LOG_FORMAT=auto)', () => {
  it('on a pseudo-terminal in development: pino-pretty lines, no JSON', async () => {
    expect(existsSync(SCRIPT)).toBe(true);
    // `script` runs the server on a new pseudo-terminal (its stdout is a TTY) and copies what it prints.
    // `exec`: the shell `script` starts ($SHELL, or sh when unset) becomes the server, so Ctrl-C reaches
    // only the server; a shell left waiting would die of the SIGINT itself and `script` answer 130.
    const server = launch(SCRIPT, ['-qfec', `exec '${process.execPath}' '${MAIN}' serve`, '/dev/null']);
    const requestLine = (line: string): boolean => /request completed/.test(line) && /\/healthz/.test(line);
    const lines = await requestAndWaitForLog(server, (all) => all.some(requestLine));

    const logged = lines.find(requestLine)!;
    expect(logged).toMatch(COLOURED); // coloured for the terminal
    expect(logged.replace(ANSI, '')).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: request completed \{.*"method":"GET","url":"\/healthz".*"statusCode":200/);
    expect(lines.some((line) => /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: .*Nest application successfully started/.test(line.replace(ANSI, '')))).toBe(true);
    expect(lines.filter((line) => line.trimStart().startsWith('{'))).toEqual([]);

    // Ctrl-C on the terminal: the server drains and exits 0 (`script -e` answers its exit status).
    server.child.stdin!.write('\x03');
    expect({ ...(await server.exited), output: server.output() }).toEqual({ code: 0, signal: null, output: expect.stringContaining('SIGINT received, draining') });
    expect(server.output()).not.toMatch(/SIGINT again/);
  });

  it('into a pipe in development: one JSON object a line', async () => {
    const server = launch(process.execPath, [MAIN, 'serve']);
    const isRequestLog = (line: string): boolean => line.startsWith('{') && (JSON.parse(line) as { msg?: string }).msg === 'request completed';
    const lines = await requestAndWaitForLog(server, (all) => all.some(isRequestLog));

    const logLines = lines.filter((line) => /^\S/.test(line) && !line.startsWith('openbot:'));
    expect(logLines.length).toBeGreaterThan(5);
    for (const line of logLines) expect(() => JSON.parse(line) as unknown).not.toThrow();
    expect(JSON.parse(lines.find(isRequestLog)!)).toMatchObject({ level: 30, req: { method: 'GET', url: '/healthz' }, res: { statusCode: 200 } });
    expect(lines.join('\n')).not.toMatch(COLOURED);

    server.child.kill('SIGINT');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });
});

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunks, heldStreamReply, statusReply, textReply, FakeOpenAiServer } from '../fakes/fake-openai-server';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The compiled `openbot` CLI (dist/apps/cli/src/main.js) as a real child process against a real
 * server listening on a port: configuration file, the resource commands with --json, `openbot chat`
 * streaming a reply (also across a connection the server drops mid-stream), and the exit codes
 * and error lines of API errors, server faults and unfinished executions.
 */
const ROOT = join(__dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'apps', 'cli', 'src', 'main.js');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RUN_TIMEOUT_MS = 30_000;

jest.setTimeout(120_000);

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** One SSE request the server received, and the drop to apply to the next one. */
interface SseRequest {
  readonly url: string;
  readonly lastEventId: string | undefined;
}

describe('openbot CLI (compiled) against a listening server', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let baseUrl: string;
  let dir: string;
  let configFile: string;
  let chatId: string;
  const sseRequests: SseRequest[] = [];
  /** Armed by a test: the next SSE response is cut after this many events. */
  let dropNext: { frames: number; dropped: () => void } | null = null;

  function cli(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (\`npm test\` builds before running jest).`);
    const clean: NodeJS.ProcessEnv = { ...process.env };
    for (const name of Object.keys(clean)) if (name.startsWith('OPENBOT_') || name === 'XDG_CONFIG_HOME') delete clean[name];
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...clean, OPENBOT_CONFIG: configFile, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    return new Promise<Run>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`openbot ${args.join(' ')} did not exit within ${RUN_TIMEOUT_MS} ms; stdout: ${stdout}; stderr: ${stderr}`));
      }, RUN_TIMEOUT_MS);
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  }

  /** Runs a command that must succeed with --json and answers its parsed output. */
  async function json<T>(args: readonly string[]): Promise<T> {
    const run = await cli([...args, '--json']);
    expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 0, stderr: '' });
    return JSON.parse(run.stdout) as T;
  }

  /**
   * Sees every request before Fastify does: records SSE requests and, when a test armed it, wraps
   * the response so the connection is destroyed right after the given number of events was written.
   */
  function watchSse(server: Server): void {
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      if (!/\/events(\?|$)/.test(req.url ?? '') || !(req.headers.accept ?? '').includes('text/event-stream')) return;
      const lastEventId = req.headers['last-event-id'];
      sseRequests.push({ url: req.url ?? '', lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined });
      const drop = dropNext;
      if (drop === null) return;
      dropNext = null;
      let frames = 0;
      const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
      res.write = ((chunk: unknown, ...rest: unknown[]) => {
        const written = write(chunk, ...rest);
        frames += (String(chunk).match(/^id: /gm) ?? []).length;
        if (frames >= drop.frames) {
          res.write = write as typeof res.write;
          setImmediate(() => {
            res.socket?.destroy();
            drop.dropped();
          });
        }
        return written;
      }) as typeof res.write;
    });
  }

  beforeAll(async () => {
    t = await startTestApp();
    watchSse(t.app.getHttpServer());
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    fake = await FakeOpenAiServer.start();
    dir = await mkdtemp(join(tmpdir(), `openbot-cli-${randomBytes(3).toString('hex')}-`));
    configFile = join(dir, 'openbot', 'config.json');
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('config set stores the URL and key in a 0600 file; orgs, providers, bots and chats are created and listed', async () => {
    const set = await cli(['config', 'set', '--url', baseUrl]);
    expect(set).toEqual({ code: 0, stdout: `saved ${configFile}\n`, stderr: '' });

    const org = await json<{ organization: { id: string; name: string }; member: { role: string }; apiKey: { id: string; secret: string } }>(['orgs', 'create', 'Acme', '--admin-token', t.adminToken]);
    expect(org).toMatchObject({ organization: { id: expect.stringMatching(UUID), name: 'Acme' }, member: { role: 'owner' }, apiKey: { secret: expect.stringMatching(/^obk_/) } });

    expect((await cli(['config', 'set', '--api-key', org.apiKey.secret])).code).toBe(0);
    expect(JSON.parse(await readFile(configFile, 'utf8'))).toEqual({ url: baseUrl, apiKey: org.apiKey.secret });
    expect((await stat(configFile)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'openbot'))).mode & 0o777).toBe(0o700);
    const shown = await cli(['config', 'show']);
    expect(shown.stdout).not.toContain(org.apiKey.secret);

    const provider = await json<{ id: string; name: string; kind: string; baseUrl: string }>(['providers', 'create', 'fake', '--base-url', fake.baseUrl]);
    expect(provider).toEqual({ id: expect.stringMatching(UUID), name: 'fake', kind: 'openai-compatible', baseUrl: fake.baseUrl });
    const bot = await json<{ id: string; name: string; model: string }>(['bots', 'create', 'Helper', '--model', 'fake/gpt-test', '--instructions', 'Be brief.']);
    expect(bot).toMatchObject({ id: expect.stringMatching(UUID), name: 'Helper', model: 'fake/gpt-test' });
    const chat = await json<{ id: string; botId: string }>(['chats', 'create', '--bot', bot.id]);
    expect(chat).toMatchObject({ id: expect.stringMatching(UUID), botId: bot.id });
    chatId = chat.id;

    expect((await json<{ data: Array<{ id: string }>; next: string | null }>(['bots', 'list'])).data.map((b) => b.id)).toEqual([bot.id]);
    expect((await json<{ data: Array<{ id: string }> }>(['chats', 'list', '--bot', bot.id])).data.map((c) => c.id)).toEqual([chat.id]);
    expect((await json<{ data: Array<{ name: string }> }>(['providers', 'list'])).data.map((p) => p.name)).toEqual(['fake']);
    expect(await json<{ id: string }>(['bots', 'get', bot.id])).toMatchObject({ id: bot.id, instructions: 'Be brief.' });

    // Human-readable by default: a table with a header row.
    const table = await cli(['bots', 'list']);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+MODEL/);
    expect(table.stdout).toContain(`${bot.id}  Helper`);

    const key = await json<{ id: string; secret: string }>(['keys', 'create', 'ci', '--scopes', 'bots.read']);
    expect(key.secret).toMatch(/^obk_/);
    expect((await json<{ data: Array<{ id: string }> }>(['keys', 'list'])).data.map((k) => k.id)).toContain(key.id);
    expect(await json<{ id: string; revokedAt: string | null }>(['keys', 'revoke', key.id])).toMatchObject({ id: key.id, revokedAt: expect.any(String) });
  });

  it('`openbot chat` sends the message and prints exactly the streamed reply and a final newline; --json prints the events', async () => {
    const parts = ['The ', 'answer ', 'is ', '42.'];
    fake.enqueue(textReply(parts, [9, 4]));
    const run = await cli(['chat', chatId, 'What is the answer?']);
    expect(run).toEqual({ code: 0, stdout: `${parts.join('')}\n`, stderr: '' });
    // It was sent with an Idempotency-Key of its own.
    const post = fake.requests.at(-1)!;
    expect(post.body.messages.at(-1)).toMatchObject({ role: 'user', content: 'What is the answer?' });

    fake.enqueue(textReply(['Again.'], [9, 2]));
    const lines = (await cli(['chat', chatId, 'Once more', '--json', '--idempotency-key', 'cli-json-1'])).stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ executionId: expect.stringMatching(UUID), admission: 'started' });
    expect(lines.slice(1).map((e) => e.seq)).toEqual(Array.from({ length: lines.length - 1 }, (_, i) => i + 1));
    expect(lines.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    const executionId = lines[0]!.executionId as string;

    expect(await json<{ id: string; state: string }>(['executions', 'get', executionId])).toMatchObject({ id: executionId, state: 'completed', kind: expect.any(String) });
    const watched = await cli(['executions', 'watch', executionId]);
    expect(watched.code).toBe(0);
    expect(watched.stdout).toMatch(/^\s+1 {2}model\.started/);
    expect(watched.stdout.trim().split('\n').at(-1)).toMatch(/execution\.ended {2}state="completed"/);

    const messages = await t.http().get(`/v1/chats/${chatId}/messages`).set('authorization', `Bearer ${JSON.parse(await readFile(configFile, 'utf8')).apiKey as string}`).expect(200);
    expect((messages.body as { data: Array<{ role: string; content: string }> }).data.slice(-2).map((m) => m.content)).toEqual(['Once more', 'Again.']);
  });

  it('`openbot chat` resumes after the server drops the stream mid-reply: the output has no gap and no repeat', async () => {
    const parts = ['Alpha ', 'beta ', 'gamma ', 'delta ', 'epsilon'];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    fake.enqueue(heldStreamReply([chunks.role(), ...parts.map(chunks.text), chunks.finish('stop'), chunks.usage(5, 5)], { holdAfter: 4, release: released }));
    // model.started and the first text.delta (tokens that arrive together join one event) exist while the model stream is held: the drop comes after them.
    const dropped = new Promise<void>((resolve) => (dropNext = { frames: 2, dropped: resolve }));
    const before = sseRequests.length;

    const running = cli(['chat', chatId, 'Greek letters please']);
    await dropped;
    release();
    const run = await running;

    expect(run).toEqual({ code: 0, stdout: `${parts.join('')}\n`, stderr: '' });
    const streams = sseRequests.slice(before);
    expect(streams.length).toBe(2);
    expect(streams[0]!.lastEventId).toBeUndefined();
    expect(Number(streams[1]!.lastEventId)).toBeGreaterThanOrEqual(1);
    // While the model is held at most three events exist (model.started, the first text, the text joined after it): the drop came mid-reply.
    expect(Number(streams[1]!.lastEventId)).toBeLessThanOrEqual(3);
  });

  it('a Turn that fails exits 4 with its category, what the provider answered and its errorId', async () => {
    fake.enqueue(statusReply(400, { error: { message: 'bad request from https://llm.test/v1?key=sk-abcdef123456', code: 'invalid_value' } }));
    const run = await cli(['chat', chatId, 'This will fail']);
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/^Error: ExecutionNotCompleted: the execution ended failed \(invalid-request\)\nprovider: 400 invalid_value: bad request from \[url\]\nerrorId: [0-9a-f-]{36}\n$/);
    const errorId = /errorId: (\S+)/.exec(run.stderr)![1]!;
    const executionId = (await t.database.query<{ id: string }>('SELECT id FROM executions WHERE error_id = $1', [errorId]))[0]!.id;
    const shown = await cli(['executions', 'get', executionId]);
    expect(shown.stdout).toMatch(/^category: +invalid-request\nprovider: +400 invalid_value: bad request from \[url\]\nerrorId: +[0-9a-f-]{36}\n$/m);
  });

  it('an API error prints its type and exits 2; a usage error exits 1', async () => {
    const missing = await cli(['bots', 'get', '0190a0b0-0000-7000-8000-000000000000']);
    expect(missing).toEqual({ code: 2, stdout: '', stderr: 'Error: BotNotFound: Bot not found.\n' });

    const invalid = await cli(['bots', 'create', 'Nameless', '--model', '']);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/^Error: InvalidInput: .*\n {2}model: /);

    const refused = await cli(['orgs', 'create', 'Nope', '--admin-token', 'wrong-token-0123456789']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^Error: Unauthenticated: /);

    const usage = await cli(['bots', 'create', 'NoModel']);
    expect(usage.code).toBe(1);
    expect(usage.stderr).toMatch(/^Error: Usage: required option '--model <model>' not specified\n/);
    expect((await cli(['no-such-command'])).code).toBe(1);
  });

  it('a server fault prints its errorId and exits 3; so does an unreachable server', async () => {
    await t.database.query('ALTER TABLE model_providers RENAME TO model_providers_hidden');
    let run: Run;
    try {
      run = await cli(['providers', 'list']);
    } finally {
      await t.database.query('ALTER TABLE model_providers_hidden RENAME TO model_providers');
    }
    expect(run.code).toBe(3);
    expect(run.stdout).toBe('');
    const match = /^Error: RequestFailed: .*\nerrorId: ([0-9a-f-]{36})\n$/.exec(run.stderr);
    expect(match).not.toBeNull();
    const [record] = await t.database.query<{ id: string }>('SELECT id FROM error_records WHERE id = $1', [match![1]]);
    expect(record).toEqual({ id: match![1] });

    const unreachable = await cli(['bots', 'list'], { OPENBOT_URL: 'http://127.0.0.1:9' });
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toMatch(/^Error: Unreachable: cannot reach http:\/\/127\.0\.0\.1:9/);
  });
});

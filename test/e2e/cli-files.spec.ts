import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../support/test-app';
import { FakeOpenAiServer, textReply } from '../fakes/fake-openai-server';
import { createChatFixture } from '../support/chat-fixture';
import { runCli, type CliRun } from '../support/cli-runner';

/** The compiled CLI's file commands against a listening server: upload, get (metadata and bytes), list, delete. */
const ROOT = join(__dirname, '..', '..');

jest.setTimeout(120_000);


describe('openbot CLI: files upload|get|list|delete', () => {
  let t: TestApp;
  let env: Record<string, string>;
  let dir: string;

  function cli(args: readonly string[]): Promise<CliRun> {
    return runCli(args, env);
  }

  async function ok(args: readonly string[]): Promise<string> {
    const run = await cli(args);
    expect({ args, code: run.code }).toEqual({ args, code: 0 });
    return run.stdout;
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'openbot-cli-files-'));
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const org = await t.createOrganization('CLI files');
    env = { OPENBOT_URL: `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`, OPENBOT_API_KEY: org.secret, OPENBOT_CONFIG: join(ROOT, 'no-such-config.json') };
  });
  afterAll(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('[PLAT-03] upload streams a file from disk, get prints its metadata and saves the same bytes, delete answers the execution', async () => {
    const bytes = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(3 * 1024 * 1024)]);
    const source = join(dir, 'picture.png');
    await writeFile(source, bytes);
    const uploaded = JSON.parse(await ok(['files', 'upload', source, '--json'])) as { id: string; name: string; contentType: string; bytes: number; sha256: string };
    expect(uploaded).toMatchObject({ name: 'picture.png', contentType: 'image/png', bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });

    expect(await ok(['files', 'get', uploaded.id])).toMatch(new RegExp(`sha256:\\s+${uploaded.sha256}`));
    const target = join(dir, 'copy.png');
    await ok(['files', 'get', uploaded.id, '--output', target]);
    expect(Buffer.compare(await readFile(target), bytes)).toBe(0);
    expect(await ok(['files', 'list'])).toContain(uploaded.id);

    // The server's magic-number check reaches the CLI as a usage-level API error.
    const liar = join(dir, 'liar.png');
    await writeFile(liar, 'not a png');
    const refused = await cli(['files', 'upload', liar]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('InvalidInput');

    const executionId = (await ok(['files', 'delete', uploaded.id])).trim();
    expect(executionId).toMatch(/^[0-9a-f-]{36}$/);
    const gone = await cli(['files', 'get', uploaded.id]);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('FileNotFound');
  });

  it('chat --file sends uploaded files with the message: the model gets them as parts, the message may be empty', async () => {
    const model = await FakeOpenAiServer.start();
    try {
      const chat = await createChatFixture(t, { baseUrl: model.baseUrl });
      const own = { ...env, OPENBOT_API_KEY: chat.secret };
      const source = join(dir, 'agenda.md');
      await writeFile(source, '# Agenda\n- budget');
      const upload = await runCli(['files', 'upload', source, '--type', 'text/markdown', '--json'], own);
      expect(upload.code).toBe(0);
      const file = JSON.parse(upload.stdout) as { id: string };
      model.enqueue(textReply(['Two items.']));
      const run = await runCli(['chat', chat.chatId, '', '--file', file.id], own);
      expect({ code: run.code, out: run.stdout }).toEqual({ code: 0, out: expect.stringContaining('Two items.') });
      const body = model.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
      expect(body.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'File "agenda.md":\n# Agenda\n- budget' }] });
    } finally {
      await model.close();
    }
  });
});

import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { addProvider } from '../support/api-assertions';
import { bearer } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { runCli, type CliRun } from '../support/cli-runner';

/** The compiled CLI's `openbot memories …` commands against a listening server. */
const ROOT = join(__dirname, '..', '..');

jest.setTimeout(120_000);


describe('openbot CLI: memories', () => {
  let t: TestApp;
  let env: Record<string, string>;
  let botId: string;

  function cli(args: readonly string[]): Promise<CliRun> {
    return runCli(args, env);
  }
  async function ok(args: readonly string[]): Promise<string> {
    const run = await cli(args);
    expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 0, stderr: '' });
    return run.stdout;
  }

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const org = await t.createOrganization('CLI Memory');
    await addProvider(t, org.secret, 'local');
    const bot = await t.http().post('/v1/bots').set('authorization', bearer(org.secret)).send({ name: 'B', model: 'local/m' }).expect(201);
    botId = (bot.body as { id: string }).id;
    env = { OPENBOT_URL: `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`, OPENBOT_API_KEY: org.secret, OPENBOT_CONFIG: join(ROOT, 'no-such-config.json') };
  });
  afterAll(async () => {
    await t?.close();
  });

  it('add, list (by tag and words), get, tag, archive, restore and delete an item', async () => {
    const added = JSON.parse(await ok(['memories', 'add', 'The depot opens at seven', '--bot', botId, '--tag', 'depot', '--role', 'admin', '--source', 'url:https://example.com/hours', '--json'])) as {
      id: string;
      access: unknown;
      sources: unknown;
    };
    expect(added.access).toEqual({ kind: 'roles', roles: ['admin'] });
    expect(added.sources).toEqual([{ type: 'url', id: 'https://example.com/hours' }]);
    expect(await ok(['memories', 'list', '--bot', botId, '--tag', 'depot'])).toContain(added.id);
    expect(await ok(['memories', 'list', '--bot', botId, '-q', 'depot seven'])).toContain(added.id);
    expect(await ok(['memories', 'list', '--bot', botId, '-q', 'midnight'])).not.toContain(added.id);
    expect(await ok(['memories', 'get', added.id, '--bot', botId])).toMatch(/content:\s+The depot opens at seven/);
    expect(await ok(['memories', 'tag', added.id, '--bot', botId, '--tag', 'hours', '--tag', 'depot'])).toMatch(/tags:\s+hours, depot/);
    expect(await ok(['memories', 'archive', added.id, '--bot', botId])).toMatch(/status:\s+archived/);
    expect(await ok(['memories', 'restore', added.id, '--bot', botId])).toMatch(/status:\s+active/);
    expect(await ok(['memories', 'delete', added.id, '--bot', botId])).toBe(`deleted ${added.id}\n`);
    const gone = await cli(['memories', 'get', added.id, '--bot', botId]);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('MemoryNotFound');
  });
});

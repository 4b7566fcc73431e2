import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startServerEverything, type RunningMcpServer } from '../fakes/mcp-test-servers';
import { startTestApp, type TestApp } from '../support/test-app';
import { runCli, type CliRun } from '../support/cli-runner';

/** The compiled CLI's App commands against a listening server and server-everything on loopback. */
const ROOT = join(__dirname, '..', '..');

jest.setTimeout(120_000);

describe('openbot CLI: apps and connections', () => {
  let t: TestApp;
  let everything: RunningMcpServer;
  let env: Record<string, string>;

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
    everything = await startServerEverything();
    const org = await t.createOrganization('CLI apps');
    env = { OPENBOT_URL: `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`, OPENBOT_API_KEY: org.secret, OPENBOT_CONFIG: join(ROOT, 'no-such-config.json') };
  });
  afterAll(async () => {
    await everything?.close();
    await t?.close();
  });

  it('apps add --connect, apps list, connections list and connections tools print what the API holds', async () => {
    const added = JSON.parse(await ok(['apps', 'add', everything.url, '--connect', '--json'])) as { app: { id: string; card: boolean }; connection: { id: string; state: string } };
    expect(added).toMatchObject({ app: { card: false }, connection: { state: 'ready' } });
    expect(await ok(['apps', 'list'])).toContain(added.app.id);
    expect(await ok(['connections', 'list'])).toMatch(new RegExp(`${added.connection.id}\\s+${added.app.id}\\s+organization\\s+ready\\s+1\\s+legacy`));
    const tools = await ok(['connections', 'tools', added.connection.id, '--limit', '200']);
    expect(tools).toMatch(/^echo\s+readOnly,idempotent\s+/m);
    expect(tools).toMatch(/^get-sum\s+/m);
  });
});

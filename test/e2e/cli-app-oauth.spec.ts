import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fakes/mcp-protected-server';
import { runCli, startCli, type CliRun } from '../support/cli-runner';
import { startAuthorizationServer, type TestAuthorizationServer } from '../support/oauth-authorization-server';
import { TestBrowser } from '../support/oidc-provider';
import { startTestApp, type TestApp } from '../support/test-app';

/** The compiled CLI's `connections authorize` against a listening server, an OAuth authorization server and a protected MCP server. */
const ROOT = join(__dirname, '..', '..');

jest.setTimeout(120_000);

describe('openbot CLI: connections authorize', () => {
  let t: TestApp;
  let as: TestAuthorizationServer;
  let rs: ProtectedMcpServer;
  let env: Record<string, string>;
  let base: string;

  beforeAll(async () => {
    as = await startAuthorizationServer();
    rs = await startProtectedMcpServer(as);
    t = await startTestApp({ env: { OPENBOT_PUBLIC_URL: 'http://127.0.0.1:8080' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    const org = await t.createOrganization('CLI OAuth');
    env = { OPENBOT_URL: base, OPENBOT_API_KEY: org.secret, OPENBOT_CONFIG: join(ROOT, 'no-such-config.json') };
  });
  afterAll(async () => {
    await rs?.close();
    await as?.close();
    await t?.close();
  });

  async function ok(args: readonly string[]): Promise<string> {
    const run: CliRun = await runCli(args, env);
    expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 0, stderr: '' });
    return run.stdout;
  }

  it('listens on 127.0.0.1, prints the authorization URL, receives the answer OpenBot’s callback relays there and completes it with the member’s key: the connection is ready', async () => {
    const added = JSON.parse(await ok(['apps', 'add', rs.url, '--connect', '--json'])) as { connection: { id: string; state: string } };
    expect(added.connection.state).toBe('needs_authorization');
    const cli = startCli(['connections', 'authorize', added.connection.id], env);
    const [, url, listener] = await cli.waitFor(/^(http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)\nWaiting for the answer at (http:\/\/127\.0\.0\.1:\d+\/callback)/m);
    expect(new URL(url!).origin).toBe(as.issuer);
    expect(new URL(url!).searchParams.get('prompt')).toBe('consent');
    // The browser on the member's machine: through the authorization server to OpenBot's callback, which relays it to the CLI's listener.
    const browser = new TestBrowser();
    const run = await browser.navigate(url!, (next) => next.href.startsWith('http://127.0.0.1:8080/'));
    const callback = new URL(run.stoppedAt!);
    const relayed = await browser.navigate(`${base}${callback.pathname}${callback.search}`);
    expect(relayed.url.startsWith(`${listener}?`)).toBe(true);
    expect(relayed.response?.status).toBe(200);
    const done = await cli.done;
    expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: '' });
    expect(done.stdout).toContain(`Connection ${added.connection.id}: ready`);
    expect(await ok(['connections', 'list'])).toMatch(new RegExp(`${added.connection.id}\\s+\\S+\\s+organization\\s+ready`));
  });
});

import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fakes/mcp-protected-server';
import { runCli, type CliRun } from '../support/cli-runner';
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

  it('prints the authorization URL on a headless terminal; following it makes the connection ready', async () => {
    const added = JSON.parse(await ok(['apps', 'add', rs.url, '--connect', '--json'])) as { connection: { id: string; state: string } };
    expect(added.connection.state).toBe('needs_authorization');
    const printed = await ok(['connections', 'authorize', added.connection.id]);
    const url = /^(http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)$/m.exec(printed)?.[1];
    expect(url).toBeDefined();
    expect(new URL(url!).origin).toBe(as.issuer);
    const run = await new TestBrowser().navigate(url!, (next) => next.href.startsWith('http://127.0.0.1:8080/'));
    const callback = new URL(run.stoppedAt!);
    await t.http().get(`${callback.pathname}${callback.search}`).expect(200);
    expect(await ok(['connections', 'list'])).toMatch(new RegExp(`${added.connection.id}\\s+\\S+\\s+organization\\s+ready`));
  });
});

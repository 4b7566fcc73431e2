import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startSdkServer, type RunningSdkServer, type TestTool } from '../fakes/mcp-test-servers';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fakes/mcp-protected-server';
import { PROOF_SERVER_CA_FILE, startProofServer, type ProofServer } from '../support/app-proof-server';
import { bearer } from '../support/chat-fixture';
import { runCli, startCli, type CliRun } from '../support/cli-runner';
import { startAuthorizationServer, type TestAuthorizationServer } from '../support/oauth-authorization-server';
import { TestBrowser } from '../support/oidc-provider';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The compiled CLI's App proof, developer test and App index commands against a listening
 * server, a real HTTPS proof server, an MCP SDK server, and an MCP server behind a real OAuth
 * authorization server.
 */
const ROOT = join(__dirname, '..', '..');
const PUBLIC_URL = 'http://127.0.0.1:8080';

jest.setTimeout(120_000);

describe('openbot CLI: App proofs, developer tests and the App index', () => {
  let t: TestApp;
  let sdk: RunningSdkServer;
  let as: TestAuthorizationServer;
  let rs: ProtectedMcpServer;
  let proofs: ProofServer;
  let env: Record<string, string>;
  let secret: string;
  const add: TestTool = { name: 'add_numbers', inputSchema: { type: 'object', properties: { a: { type: 'number' } } }, handler: async (a) => ({ text: String(a.a) }) };

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_EGRESS_CA_FILE: PROOF_SERVER_CA_FILE, OPENBOT_PUBLIC_URL: PUBLIC_URL } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    sdk = await startSdkServer({ era: 'legacy', tools: () => [add] });
    as = await startAuthorizationServer();
    rs = await startProtectedMcpServer(as);
    proofs = await startProofServer();
    const org = await t.createOrganization('CLI app catalog');
    secret = org.secret;
    env = { OPENBOT_URL: `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`, OPENBOT_API_KEY: org.secret, OPENBOT_CONFIG: join(ROOT, 'no-such-config.json') };
  });
  afterAll(async () => {
    await proofs?.close();
    await rs?.close();
    await as?.close();
    await sdk?.close();
    await t?.close();
  });

  async function ok(args: readonly string[]): Promise<string> {
    const run: CliRun = await runCli(args, env);
    expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 0, stderr: '' });
    return run.stdout;
  }

  /** Apps proven so far, by URL: an organization registers a URL once (409 AppExists), so a later test reuses it. */
  const proven = new Map<string, string>();

  /** An App with a verified proof of its domain, made through the CLI. */
  async function provenApp(url: string): Promise<string> {
    const known = proven.get(url);
    if (known !== undefined) return known;
    const app = JSON.parse(await ok(['apps', 'add', url, '--json'])) as { id: string };
    const proof = JSON.parse(await ok(['apps', 'proofs', 'create', app.id, proofs.host, '--json'])) as { id: string; token: string; state: string };
    expect(proof.state).toBe('pending');
    proofs.serve(proof.token);
    expect(await ok(['apps', 'proofs', 'verify', app.id, proof.id])).toMatch(/^state:\s+verified$/m);
    proven.set(url, app.id);
    return app.id;
  }

  it('[DEVT-01] apps proofs create|verify|list|delete, apps developer-tests start --wait|show, apps index and app-index search', async () => {
    const appId = await provenApp(sdk.url);
    const [proof] = (JSON.parse(await ok(['apps', 'proofs', 'list', appId, '--json'])) as { data: Array<{ id: string; state: string; domain: string }> }).data;
    expect(proof).toMatchObject({ state: 'verified', domain: proofs.host });
    expect(await ok(['apps', 'proofs', 'list', appId])).toMatch(new RegExp(`^${proof!.id}\\s+${proofs.host}\\s+verified\\s`, 'm'));

    const from = sdk.requests.length;
    const test = JSON.parse(await ok(['apps', 'developer-tests', 'start', appId, '--header', 'X-Dev-Key=cli-literal-3f9a', '--wait', '--json'])) as Record<string, unknown>;
    expect(test).toMatchObject({ state: 'completed', tools: ['add_numbers'], headers: { 'X-Dev-Key': null }, connection: { state: 'ready', closed: 'deleted' } });
    expect(sdk.requests.slice(from).filter((r) => r.rpc === 'tools/list').map((r) => r.headers?.['x-dev-key'])).toEqual(['cli-literal-3f9a']);
    const shown = await ok(['apps', 'developer-tests', 'show', appId, test.id as string]);
    expect(shown).toMatch(/^state:\s+completed$/m);
    expect(shown).toMatch(/^tools:\s+add_numbers$/m);

    expect(await ok(['apps', 'index', appId])).toMatch(/^state:\s+completed$/m);
    expect(await ok(['app-index', 'search', 'add_numbers'])).toMatch(new RegExp(`^${appId}\\s+\\S+\\s+-\\s+add_numbers\\s`, 'm'));
    expect(await ok(['app-index', 'search', 'nothing-like-it', '--json'])).toContain('"data": []');

    // A removed proof hides the App from the index on the next read.
    expect(await ok(['apps', 'proofs', 'delete', appId, proof!.id])).toMatch(/^id:\s+/m);
    expect(await ok(['app-index', 'search', 'add_numbers', '--json'])).toContain('"data": []');

    // A bad value is the API's 400, named on its field.
    const bad = await runCli(['apps', 'developer-tests', 'start', appId, '--header', 'Host=elsewhere'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('headers.Host');
  });

  /** The member's browser on this machine: through the authorization server to OpenBot's callback, which relays the answer to the CLI's listener. */
  async function signInAt(url: string, listener: string): Promise<void> {
    expect(new URL(url).origin).toBe(as.issuer);
    const browser = new TestBrowser();
    const run = await browser.navigate(url, (next) => next.href.startsWith(`${PUBLIC_URL}/`));
    const callback = new URL(run.stoppedAt!);
    const relayed = await browser.navigate(`${env.OPENBOT_URL}${callback.pathname}${callback.search}`);
    expect(relayed.url.startsWith(`${listener}?`)).toBe(true);
    expect(relayed.response?.status).toBe(200);
  }

  const SIGN_IN = /^(http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)\nWaiting for the answer at (http:\/\/127\.0\.0\.1:\d+\/callback)/m;

  it('[DEVT-01] apps developer-tests show tells how to sign in a test that needs its developer’s grant; apps developer-tests authorize signs it in through the CLI’s loopback listener, then shows the tools', async () => {
    const appId = await provenApp(rs.url);
    const started = JSON.parse(await ok(['apps', 'developer-tests', 'start', appId, '--json'])) as { id: string; executionId: string };
    for (let i = 0; ; i++) {
      const body = (await t.http().get(`/v1/apps/${appId}/developer-tests/${started.id}`).set('authorization', bearer(secret)).expect(200)).body as { state: string };
      if (body.state === 'needs_authorization') break;
      if (i > 400) throw new Error(`the developer test is ${body.state}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    // `show` prints OpenBot's start URL (for the member's signed-in browser) and the command that signs in with the key.
    const printed = await ok(['apps', 'developer-tests', 'show', appId, started.id]);
    expect(printed).toMatch(/^state:\s+needs_authorization$/m);
    const startUrl = /^start url:\s+(\S+)$/m.exec(printed)?.[1];
    expect(startUrl).toMatch(new RegExp(`^${PUBLIC_URL}/v1/oauth/authorizations/[0-9a-f-]{36}/start$`));
    // The pending authorization's id, which `authorize` binds, is the server's own field: the one in the start URL.
    const authorizationId = /^authorization:\s+(\S+)$/m.exec(printed)?.[1];
    expect(startUrl).toBe(`${PUBLIC_URL}/v1/oauth/authorizations/${authorizationId}/start`);
    expect(printed).toContain(`openbot apps developer-tests authorize ${appId} ${started.id}`);

    const cli = startCli(['apps', 'developer-tests', 'authorize', appId, started.id], env);
    const [, url, listener] = await cli.waitFor(SIGN_IN);
    await signInAt(url!, listener!);
    const done = await cli.done;
    expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: '' });
    // The sign-in's outcome: the test runs again with the grant (or already ended, when its run was quicker than the answer).
    expect(done.stdout).toMatch(new RegExp(`^Developer test ${started.id}: (running|completed)$`, 'm'));
    expect(done.stdout).toMatch(/^state:\s+completed$/m);
    expect(done.stdout).toMatch(/^tools:\s+whoami$/m);
    const shown = await ok(['apps', 'developer-tests', 'show', appId, started.id]);
    expect(shown).toMatch(/^tools:\s+whoami$/m);
    expect(shown).not.toMatch(/^start url:/m);
    expect(shown).not.toMatch(/^authorization:/m);
    // Nothing left to sign in: the command says so instead of listening.
    const again = await runCli(['apps', 'developer-tests', 'authorize', appId, started.id], env);
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 1, stderr: expect.stringContaining('the developer test is completed: no sign-in of yours is pending') as unknown });
    expect(await ok(['apps', 'developer-tests', 'delete', appId, started.id])).toMatch(new RegExp(`^removed:\\s+${started.id}$`, 'm'));
  });

  it('[DEVT-01] apps developer-tests start --wait signs in through the loopback listener when the server asks for the developer’s grant, then prints the tools', async () => {
    const appId = await provenApp(rs.url);
    const cli = startCli(['apps', 'developer-tests', 'start', appId, '--wait'], env);
    const [, url, listener] = await cli.waitFor(SIGN_IN);
    await signInAt(url!, listener!);
    const done = await cli.done;
    expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: '' });
    expect(done.stdout).toMatch(/^Developer test \S+: (running|completed)$/m);
    expect(done.stdout).toMatch(/^state:\s+completed$/m);
    expect(done.stdout).toMatch(/^tools:\s+whoami$/m);
  });
});

import { startProtectedMcpServer, type ProtectedMcpServer } from '../../fakes/mcp-protected-server';
import { startAuthorizationServer, type TestAuthorizationServer } from '../../support/oauth-authorization-server';
import { TestBrowser } from '../../support/oidc-provider';
import { LOOPBACK_LISTENER } from '../../support/app-oauth-sign-in';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { addMember, ADMIN_TOKEN, api, expectApi, startServerNode, stopAllServerNodes, waitUntil, type ServerNode } from './server-node';

jest.setTimeout(120_000);

const LEASE_SECONDS = 2;
/** Where the authorization server sends the browser back; the test's browser stops before it and calls a node itself. */
const PUBLIC_URL = 'http://127.0.0.1:8080';

let db: TestDatabase | null = null;
let as: TestAuthorizationServer | null = null;
let rs: ProtectedMcpServer | null = null;
let release: () => void = () => undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  as = await startAuthorizationServer();
  rs = await startProtectedMcpServer(as);
});

afterAll(async () => {
  release();
  await stopAllServerNodes();
  await rs?.close();
  await as?.close();
  await db?.drop().catch(() => undefined);
});

const env = { OPENBOT_PUBLIC_URL: PUBLIC_URL };

/** Plays the browser from the authorization URL to just before OpenBot's callback; answers the callback's path and query. */
async function playBrowser(authorizationUrl: string): Promise<string> {
  const run = await new TestBrowser().navigate(authorizationUrl, (next) => next.href.startsWith(`${PUBLIC_URL}/`));
  if (run.stoppedAt === null) throw new Error(`the browser did not reach the callback: ${run.response?.status} ${await run.response?.text()}`);
  const stop = new URL(run.stoppedAt);
  return `${stop.pathname}${stop.search}`;
}

async function authorize(node: ServerNode, secret: string, connectionId: string): Promise<string> {
  const { authorizationUrl } = await expectApi<{ authorizationUrl: string }>(200, node, 'POST', `/v1/connections/${connectionId}/authorize`, { token: secret, body: { loopbackRedirect: LOOPBACK_LISTENER } });
  return playBrowser(authorizationUrl);
}

/** The callback on `node` relays the answer to the member's loopback listener (decision 066): answers what the listener receives. */
async function relayed(node: ServerNode, callback: string): Promise<Record<string, string>> {
  const relay = await fetch(`${node.base}${callback}`, { redirect: 'manual' });
  expect(relay.status).toBe(303);
  return Object.fromEntries(new URL(relay.headers.get('location')!).searchParams.entries());
}

async function executionState(id: string): Promise<string | undefined> {
  const [row] = await db!.query<{ state: string }>('SELECT state FROM executions WHERE id = $1', [id]);
  return row?.state;
}

async function ended(id: string, what: () => string): Promise<string> {
  return waitUntil(async () => {
    const state = await executionState(id);
    return state !== undefined && ['completed', 'failed', 'cancelled'].includes(state) ? state : undefined;
  }, 40_000, what);
}

/**
 * A code exchange whose owner node dies in it (two real server processes on one database; the
 * authorization server — oidc-provider, rotating refresh tokens, revocation — and the MCP
 * resource server it protects run in this jest process). Node A sends the code; the token
 * endpoint's answer is held while A is frozen, so A's lease runs out and B takes the exchange
 * over: the unsafe exchange (a code works once) is never sent again, and the execution waits in
 * outcome_unknown. An operator stops it. Then the token endpoint answers A after all: A saves
 * that late result, in the call's own commit, as a grant result with a cleanup command, and is
 * killed (kill -9, a fault point) right after that commit. Nobody is left to install the pair
 * and it must not be installed: B runs the cleanup, which revokes it at the authorization
 * server. The connection is left needing authorization; the member authorizes again through B,
 * and the connection holds exactly one installed grant.
 */
describe('a code exchange whose owner node dies mid-exchange (two real server processes)', () => {
  it('[GRANT-01] kill -9 during the code exchange: the late result is handed to cleanup', async () => {
    // B first: every setup step (and its executions' calls) runs before A, which carries the fault, exists.
    const b = await startServerNode({ databaseUrl: db!.url, nodeId: 'oauth-node-b', leaseSeconds: LEASE_SECONDS, env });
    const org = await expectApi<{ organization: { id: string }; apiKey: { secret: string } }>(201, b, 'POST', '/v1/organizations', { token: ADMIN_TOKEN, body: { name: 'OAuth crash' } });
    const owner = org.apiKey.secret;
    const member = await addMember(b, owner);
    const app = await expectApi<{ id: string }>(201, b, 'POST', '/v1/apps', { token: owner, body: { url: rs!.url } });
    const connection = await expectApi<{ id: string; state: string }>(201, b, 'POST', `/v1/apps/${app.id}/connections`, { token: member.secret, body: { owner: 'member' } });
    expect(connection.state).toBe('needs_authorization');
    const connectionId = connection.id;
    const callback = await authorize(b, member.secret, connectionId);

    // A dies right after the first call result it commits (the exchange is the first phase: step 1).
    const a = await startServerNode({ databaseUrl: db!.url, nodeId: 'oauth-node-a', leaseSeconds: LEASE_SECONDS, env, faults: 'call.result.committed=kill@step:1' });
    const tokenPosts = (): number => as!.requests.filter((path) => path === '/token').length;
    as!.hold('/token', new Promise<void>((resolve) => (release = resolve)));
    // The member posts the relayed answer to A: A runs the exchange and sends the code; the token endpoint holds its answer.
    const received = await relayed(a, callback);
    const answer = api(a, 'POST', '/v1/oauth/authorizations/complete', { token: member.secret, body: received }).then((res) => res.status, () => null);
    await waitUntil(async () => (tokenPosts() === 1 ? true : undefined), 20_000, () => `the code never reached the token endpoint\n${a.tail()}`);
    const [authorization] = await db!.query<{ exchange_execution_id: string }>('SELECT exchange_execution_id FROM app_oauth_authorizations WHERE connection_id = $1', [connectionId]);
    const exchangeId = authorization!.exchange_execution_id;
    expect(await db!.query('SELECT owner_node FROM executions WHERE id = $1', [exchangeId])).toEqual([{ owner_node: 'oauth-node-a' }]);

    // A freezes with the code at the server: its lease runs out and B takes the exchange over.
    a.child.kill('SIGSTOP');
    await waitUntil(async () => ((await executionState(exchangeId)) === 'outcome_unknown' ? true : undefined), 40_000, () => `the exchange never reached outcome_unknown\n${b.tail()}`);
    const [takenOver] = await db!.query<{ generation: number }>('SELECT generation FROM executions WHERE id = $1', [exchangeId]);
    expect(takenOver!.generation).toBeGreaterThanOrEqual(2);
    // The unsafe exchange was not sent again; nothing was obtained, nothing installed.
    expect(tokenPosts()).toBe(1);
    expect(await db!.query(`SELECT status FROM execution_calls WHERE execution_id = $1`, [exchangeId])).toEqual([{ status: 'unknown' }]);
    expect(await db!.query('SELECT 1 FROM app_oauth_grant_results WHERE source_execution_id = $1', [exchangeId])).toEqual([]);

    // An operator stops the exchange (the member authorizes again later).
    const decided = await expectApi<{ state: string }>(202, b, 'POST', `/v1/platform/executions/${exchangeId}/decision`, { token: ADMIN_TOKEN, body: { decision: 'stop' } });
    expect(decided.state).toBe('cancelled');
    expect(await expectApi<{ state: string }>(200, b, 'GET', `/v1/connections/${connectionId}`, { token: member.secret })).toMatchObject({ state: 'needs_authorization' });

    // The token endpoint answers A after all; A wakes up, saves that late result and is killed right after its commit.
    release();
    a.child.kill('SIGCONT');
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // The callback's own answer (the stopped exchange, or none: A died) does not matter here.
    await answer;
    const [late] = await db!.query<{ id: string; kind: string; installed_at: string | null; cleanup_execution_id: string | null }>(
      'SELECT id, kind, installed_at, cleanup_execution_id FROM app_oauth_grant_results WHERE source_execution_id = $1',
      [exchangeId],
    );
    expect(late).toMatchObject({ kind: 'exchange', installed_at: null, cleanup_execution_id: expect.any(String) });
    // It is the dead owner's result: saved under its generation, in the call log.
    const [call] = await db!.query<{ id: string; status: string; generation: number }>('SELECT id, status, generation FROM execution_calls WHERE execution_id = $1', [exchangeId]);
    expect(call).toEqual({ id: expect.any(String), status: 'succeeded', generation: 1 });
    expect(await db!.query('SELECT call_id FROM app_oauth_grant_results WHERE id = $1', [late!.id])).toEqual([{ call_id: call!.id }]);

    // Its source had ended already: the cleanup was not held, and B (the only node left) runs it as the organization's service.
    expect(await ended(late!.cleanup_execution_id!, () => `the cleanup never ended\n${b.tail()}`)).toBe('completed');
    const [cleaned] = await db!.query<{ revocation: unknown; tokens_record_id: string | null; scope_kind: string }>(
      'SELECT r.revocation, r.tokens_record_id, e.scope_kind FROM app_oauth_grant_results r JOIN executions e ON e.id = r.cleanup_execution_id WHERE r.id = $1',
      [late!.id],
    );
    expect(cleaned).toEqual({ revocation: { kind: 'revoked' }, tokens_record_id: null, scope_kind: 'service' });
    expect(as!.revocations).toEqual(['refresh_token']);
    expect(await db!.query('SELECT 1 FROM app_oauth_grants WHERE connection_id = $1', [connectionId])).toEqual([]);
    expect(await db!.query('SELECT 1 FROM app_oauth_grant_uses')).toEqual([]);

    // The member authorizes again through B: the connection holds exactly one installed grant, its own.
    const again = await api<{ state: string; executionId: string }>(b, 'POST', '/v1/oauth/authorizations/complete', { token: member.secret, body: await relayed(b, await authorize(b, member.secret, connectionId)) });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ state: 'ready' });
    const grants = await db!.query<{ installed_call_id: string }>('SELECT installed_call_id FROM app_oauth_grants WHERE connection_id = $1', [connectionId]);
    const [installedCall] = await db!.query<{ id: string }>('SELECT id FROM execution_calls WHERE execution_id = $1', [again.body.executionId]);
    expect(grants).toEqual([{ installed_call_id: installedCall!.id }]);
    const results = await db!.query<{ installed: boolean; cleaned: boolean }>(
      `SELECT installed_at IS NOT NULL AS installed, cleaned_at IS NOT NULL AS cleaned FROM app_oauth_grant_results WHERE kind = 'exchange' ORDER BY created_at`,
    );
    expect(results).toEqual([
      { installed: false, cleaned: true },
      { installed: true, cleaned: false },
    ]);
    const tools = await expectApi<{ data: Array<{ name: string }> }>(200, b, 'GET', `/v1/connections/${connectionId}/tools`, { token: member.secret });
    expect(tools.data.map((tool) => tool.name)).toEqual(['whoami']);
    expect(b.exit).toBeNull();
  });
});

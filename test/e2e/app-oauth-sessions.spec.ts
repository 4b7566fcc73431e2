import { newId } from '@openbot/domain';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fakes/mcp-protected-server';
import { bearer } from '../support/chat-fixture';
import { startAuthorizationServer, type TestAuthorizationServer } from '../support/oauth-authorization-server';
import { TestBrowser } from '../support/oidc-provider';
import { completedByLoopback, LOOPBACK_LISTENER } from '../support/app-oauth-sign-in';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';

/**
 * The connection cleanup's `DELETE` of a legacy MCP session left by a dead node (RES-06, RES-07),
 * on a server protected by App OAuth: oidc-provider (rotating refresh tokens, revocation) in
 * front of an SDK resource server that keeps legacy sessions behind its bearer check. The DELETE
 * carries the connection's grant token, refreshed through the grant's one refresh path when the
 * server refuses it; a refusal no refresh can cure is a final close result.
 */
describe('App OAuth: closing a dead node’s legacy session', () => {
  const PUBLIC_URL = 'http://127.0.0.1:8080';
  let t: TestApp;
  let as: TestAuthorizationServer;
  let rs: ProtectedMcpServer;

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_PUBLIC_URL: PUBLIC_URL } });
  });
  // Each test has its own servers: each counts the revocations it saw.
  beforeEach(async () => {
    as = await startAuthorizationServer();
    rs = await startProtectedMcpServer(as, { sessions: true });
  });
  afterEach(async () => {
    as.failPath('/token', null);
    await rs.close();
    await as.close();
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = (secret: string, path: string, body: unknown = {}) => t.http().post(path).set('authorization', bearer(secret)).send(body as object);

  /** A ready connection of a new organization to the session-keeping server, after one check. */
  async function readyConnection(name: string): Promise<{ secret: string; connectionId: string }> {
    const org = await t.createOrganization(name);
    const app = (await post(org.secret, '/v1/apps', { url: rs.url }).expect(201)).body as { id: string };
    const connectionId = ((await post(org.secret, `/v1/apps/${app.id}/connections`).expect(201)).body as { id: string }).id;
    const authorization = await post(org.secret, `/v1/connections/${connectionId}/authorize`, { loopbackRedirect: LOOPBACK_LISTENER }).expect(200);
    const run = await new TestBrowser().navigate((authorization.body as { authorizationUrl: string }).authorizationUrl, (next) => next.href.startsWith(`${PUBLIC_URL}/`));
    const stop = new URL(run.stoppedAt!);
    expect((await completedByLoopback(t, org.secret, `${stop.pathname}${stop.search}`)).body).toMatchObject({ state: 'ready' });
    const checked = await post(org.secret, `/v1/connections/${connectionId}/check`).expect(202);
    await waitForExecutionState(t, org.secret, (checked.body as { executionId: string }).executionId, 'completed');
    return { secret: org.secret, connectionId };
  }

  /** What a node that died left behind: a legacy session it opened with the connection's token, and its scope row, lease run out. */
  async function deadNodeSession(connectionId: string): Promise<{ scopeId: string; sessionId: string; token: string }> {
    const token = rs.accepted.at(-1)!;
    const res = await fetch(rs.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'dead-node', version: '1.0.0' } } }),
    });
    expect(res.status).toBe(200);
    const sessionId = res.headers.get('mcp-session-id')!;
    await res.body?.cancel();
    const scopeId = newId();
    await t.database.query(
      `INSERT INTO app_connection_scopes (id, connection_id, node_id, execution_id, url, era, session_id, lease_until) VALUES ($1, $2, 'dead-node', NULL, $3, 'legacy', $4, now() - interval '1 minute')`,
      [scopeId, connectionId, rs.url, sessionId],
    );
    expect(rs.openSessions()).toBe(1);
    return { scopeId, sessionId, token };
  }

  async function ended(executionId: string): Promise<string> {
    for (let i = 0; i < 400; i++) {
      const [row] = await t.database.query<{ state: string }>('SELECT state FROM executions WHERE id = $1', [executionId]);
      if (row !== undefined && ['completed', 'failed', 'cancelled'].includes(row.state)) return row.state;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`execution ${executionId} did not end`);
  }

  /** The close result stored on a scope row (the row goes with the connection at the cleanup's end, so it is read as soon as it is there). */
  async function closeResult(scopeId: string): Promise<unknown> {
    for (let i = 0; i < 400; i++) {
      const [row] = await t.database.query<{ close_result: unknown }>('SELECT close_result FROM app_connection_scopes WHERE id = $1', [scopeId]);
      if (row === undefined) throw new Error('the scope row went before its close result was read');
      if (row.close_result !== null) return row.close_result;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`scope ${scopeId} was not closed`);
  }
  const deletesOf = (sessionId: string) => rs.deletes.filter((d) => d.sessionId === sessionId);

  it('[RES-07] the cleanup’s DELETE carries the connection’s grant token, refreshed once through the grant’s refresh when the server refuses it; the session ends, then the grant goes to cleanup', async () => {
    const { secret, connectionId } = await readyConnection('DeadSession');
    const left = await deadNodeSession(connectionId);
    // The token the dead node used has expired at the resource since.
    rs.refuseTokensSeenSoFar();
    const [grant] = await t.database.query<{ id: string }>('SELECT id FROM app_oauth_grants WHERE connection_id = $1', [connectionId]);

    const deleted = await t.http().delete(`/v1/connections/${connectionId}`).set('authorization', bearer(secret)).expect(202);
    const cleanupId = (deleted.body as { executionId: string }).executionId;
    expect(await closeResult(left.scopeId)).toEqual({ kind: 'deleted', sessionId: left.sessionId });
    expect(await ended(cleanupId)).toBe('completed');

    const sent = deletesOf(left.sessionId);
    expect(sent.map((d) => d.status)).toEqual([401, 200]);
    expect(sent[0]!.token).toBe(left.token);
    expect(sent[1]!.token).not.toBe(left.token);
    expect(rs.openSessions()).toBe(0);
    // The refresh was the grant's one refresh execution, its call saved in the call log.
    expect(as.tokenRequests.filter((r) => r.grantType === 'refresh_token')).toHaveLength(1);
    const calls = await t.database.query<{ status: string; kind: string }>(
      `SELECT c.status, c.kind FROM execution_calls c JOIN executions e ON e.id = c.execution_id WHERE e.workflow = 'app.oauth.refresh' AND e.resource_id = $1`,
      [grant!.id],
    );
    expect(calls).toEqual([{ status: 'succeeded', kind: 'oauth' }]);
    // The cleanup's end handed the grant (the rotated pair) to grant cleanup, which revokes it: no holder is left.
    expect(await t.database.query('SELECT 1 FROM app_oauth_grants WHERE id = $1', [grant!.id])).toEqual([]);
    const [removed] = await t.database.query<{ cleanup_execution_id: string }>(`SELECT cleanup_execution_id FROM app_oauth_grant_results WHERE call_id LIKE $1`, [`grant:${grant!.id}:%:removed`]);
    expect(await ended(removed!.cleanup_execution_id)).toBe('completed');
    expect(as.revocations).toEqual(['refresh_token']);
  });

  it('[RES-06] a 401 to the DELETE that no refresh cures (the grant is gone at the server) is a final close result: saved once, the DELETE is not tried again', async () => {
    const { secret, connectionId } = await readyConnection('RefusedDelete');
    const left = await deadNodeSession(connectionId);
    rs.refuseTokensSeenSoFar();
    as.failPath('/token', { status: 400, error: 'invalid_grant' });

    const deleted = await t.http().delete(`/v1/connections/${connectionId}`).set('authorization', bearer(secret)).expect(202);
    expect(await closeResult(left.scopeId)).toEqual({ kind: 'refused', sessionId: left.sessionId, status: 401 });
    expect(await ended((deleted.body as { executionId: string }).executionId)).toBe('completed');

    // One DELETE with the refused token, one refresh attempt; the cleanup ended, so nothing is sent again.
    expect(deletesOf(left.sessionId).map((d) => [d.token, d.status])).toEqual([[left.token, 401]]);
    expect(as.requests.filter((path) => path === '/token')).toHaveLength(2);
  });
});

import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { addMember, bearer } from '../support/chat-fixture';
import { expectDeclared } from '../support/api-assertions';
import { startAuthorizationServer, type TestAuthorizationServer } from '../support/oauth-authorization-server';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';
import { eventually } from '../integration/engine/helpers';
import { Engine } from '@openbot/engine';
import { startSdkServer, type RunningSdkServer, type TestTool } from '../fakes/mcp-test-servers';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fakes/mcp-protected-server';

const TLS = join(__dirname, '..', 'fixtures', 'tls');

/**
 * Developer proofs of an App's domain and the App index over the public API. The proof is served
 * by a real HTTPS server with the committed self-signed certificate of 127.0.0.1
 * (test/fixtures/tls), which the test app trusts through OPENBOT_EGRESS_CA_FILE; the Apps are MCP
 * SDK servers, one of them behind a real OAuth authorization server (it answers 401).
 */
describe('App proofs and index', () => {
  let t: TestApp;
  let sdk: RunningSdkServer;
  let legacy: RunningSdkServer;
  let as: TestAuthorizationServer;
  let rs: ProtectedMcpServer;
  let proofServer: Server;
  let proofHost: string;
  /** What the proof server answers at /.well-known/openbot-app-proof. */
  let served = '';
  /** The status it answers there. */
  let servedStatus = 200;
  const add: TestTool = { name: 'add_numbers', inputSchema: { type: 'object', properties: { a: { type: 'number' } } }, handler: async (a) => ({ text: String(a.a) }) };

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_EGRESS_CA_FILE: join(TLS, 'localhost-cert.pem') } });
    sdk = await startSdkServer({ era: 'modern', tools: () => [add] });
    legacy = await startSdkServer({ era: 'legacy', tools: () => [add] });
    as = await startAuthorizationServer();
    rs = await startProtectedMcpServer(as);
    proofServer = createServer({ cert: readFileSync(join(TLS, 'localhost-cert.pem')), key: readFileSync(join(TLS, 'localhost-key.pem')) }, (req, res) => {
      if (req.url === '/.well-known/openbot-app-proof') res.writeHead(servedStatus, { 'content-type': 'text/plain' }).end(`${served}\n`);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => proofServer.listen(0, '127.0.0.1', resolve));
    proofHost = `127.0.0.1:${(proofServer.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => (proofServer ? proofServer.close(() => resolve()) : resolve()));
    await rs?.close();
    await as?.close();
    await sdk?.close();
    await legacy?.close();
    await t?.close();
  });

  const post = (secret: string, path: string, body: unknown = {}) => t.http().post(path).set('authorization', bearer(secret)).send(body as object);
  const get = (secret: string, path: string) => t.http().get(path).set('authorization', bearer(secret));
  const started = async (secret: string, path: string): Promise<void> => {
    const res = await post(secret, path).expect(202);
    await waitForExecutionState(t, secret, (res.body as { executionId: string }).executionId, 'completed');
  };

  /** A verified proof of the App's domain: the server serves the token, and verification runs to its end. */
  async function prove(secret: string, appId: string): Promise<string> {
    const proof = (await post(secret, `/v1/apps/${appId}/proofs`, { domain: proofHost }).expect(201)).body as { id: string; token: string; state: string };
    expect(proof.state).toBe('pending');
    served = proof.token;
    await started(secret, `/v1/apps/${appId}/proofs/${proof.id}/verify`);
    expect((await get(secret, `/v1/apps/${appId}/proofs/${proof.id}`).expect(200)).body).toMatchObject({ state: 'verified', domain: proofHost });
    return proof.id;
  }

  /**
   * Starts a workflow as `member` at `path` and removes the member while it runs: the workflow saves
   * its outside read (`call`), is held there by a pause until the member is removed over the API,
   * then goes on to its end: it completes, and only its end transaction decides what is applied.
   */
  async function removedWhileRunning(ownerSecret: string, member: { memberId: string; secret: string }, path: string, call: 'crawl' | 'fetch'): Promise<void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    t.app.get(Engine).faults.arm('call.result.committed', { kind: 'pause', until: held }, { times: 1, when: (c) => c.callKey?.endsWith(`:${call}`) === true });
    const executionId = ((await post(member.secret, path).expect(202)).body as { executionId: string }).executionId;
    try {
      await eventually(async () => {
        const calls = await t.database.query<{ status: string }>('SELECT status FROM execution_calls WHERE execution_id = $1', [executionId]);
        return calls.length === 1 && calls[0]!.status === 'succeeded';
      }, `the held ${call} to save its read`);
      await t.http().delete(`/v1/members/${member.memberId}`).set('authorization', bearer(ownerSecret)).expect(200);
    } finally {
      release();
    }
    const ended = await eventually(async () => {
      const [row] = await t.database.query<{ state: string }>('SELECT state FROM executions WHERE id = $1', [executionId]);
      return ['completed', 'failed', 'cancelled', 'interrupted'].includes(row!.state) ? row!.state : null;
    }, `the held ${call} to end`);
    expect(ended).toBe('completed');
  }

  it('[MIG-04] the index shows a crawled App only while it has a verified proof: a removed proof hides it again', async () => {
    const org = await t.createOrganization('Index');
    const app = (await post(org.secret, '/v1/apps', { url: sdk.url }).expect(201)).body as { id: string; name: string };
    await started(org.secret, `/v1/apps/${app.id}/index`);
    // Crawled, but no proof yet: nothing is shown.
    expect((await get(org.secret, '/v1/app-index').expect(200)).body).toEqual({ data: [], next: null });

    const proofId = await prove(org.secret, app.id);
    const page = (await get(org.secret, '/v1/app-index?q=add_numbers').expect(200)).body as { data: Array<Record<string, unknown>> };
    expect(page.data).toEqual([{ appId: app.id, name: app.name, title: null, description: null, tools: ['add_numbers'], needsAuthorization: false, indexedAt: expect.any(String) }]);
    expect((await get(org.secret, '/v1/app-index?q=nothing-like-it').expect(200)).body).toEqual({ data: [], next: null });
    // A member without apps.manage reads the index (apps.read), but cannot change proofs or crawl.
    const reader = await addMember(t, org.organizationId, 'member');
    expect(((await get(reader.secret, '/v1/app-index').expect(200)).body as { data: unknown[] }).data).toHaveLength(1);
    expectDeclared(await post(reader.secret, `/v1/apps/${app.id}/index`), 403, 'Forbidden');
    expectDeclared(await post(reader.secret, `/v1/apps/${app.id}/proofs`, { domain: proofHost }), 403, 'Forbidden');

    // Another organization sees nothing and reaches nothing of it.
    const other = await t.createOrganization('Index other');
    expect((await get(other.secret, '/v1/app-index').expect(200)).body).toEqual({ data: [], next: null });
    expectDeclared(await post(other.secret, `/v1/apps/${app.id}/index`), 404, 'AppNotFound');
    expectDeclared(await post(other.secret, `/v1/apps/${app.id}/proofs`, { domain: proofHost }), 404, 'AppNotFound');
    expectDeclared(await post(other.secret, `/v1/apps/${app.id}/proofs/${proofId}/verify`), 404, 'ProofNotFound');
    expectDeclared(await t.http().delete(`/v1/apps/${app.id}/proofs/${proofId}`).set('authorization', bearer(other.secret)), 404, 'ProofNotFound');

    // The stored entry stays, but the removed proof grants nothing on the next read.
    await t.http().delete(`/v1/apps/${app.id}/proofs/${proofId}`).set('authorization', bearer(org.secret)).expect(200);
    expect((await get(org.secret, '/v1/app-index').expect(200)).body).toEqual({ data: [], next: null });
    expect(await t.database.query('SELECT count(*)::int AS n FROM app_index_entries WHERE app_id = $1', [app.id])).toEqual([{ n: 1 }]);
  });

  it('a crawl of a server that answers 401 records the App as needing authorization, not as a failure', async () => {
    const org = await t.createOrganization('Index 401');
    const app = (await post(org.secret, '/v1/apps', { url: rs.url }).expect(201)).body as { id: string };
    await prove(org.secret, app.id);
    await started(org.secret, `/v1/apps/${app.id}/index`);
    const page = (await get(org.secret, '/v1/app-index').expect(200)).body as { data: Array<Record<string, unknown>> };
    expect(page.data).toEqual([expect.objectContaining({ appId: app.id, tools: [], needsAuthorization: true })]);
  });

  it('a proof fails when the domain serves another token, and must name the host of the App URL', async () => {
    const org = await t.createOrganization('Proof');
    const app = (await post(org.secret, '/v1/apps', { url: sdk.url }).expect(201)).body as { id: string };
    const wrongHost = await post(org.secret, `/v1/apps/${app.id}/proofs`, { domain: 'example.com' });
    expectDeclared(wrongHost, 400, 'InvalidInput');
    expect((wrongHost.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['domain']);
    expectDeclared(await post(org.secret, `/v1/apps/${app.id}/proofs`, { domain: 'https://127.0.0.1/x' }), 400, 'InvalidInput');

    const proof = (await post(org.secret, `/v1/apps/${app.id}/proofs`, { domain: proofHost }).expect(201)).body as { id: string; token: string };
    served = 'someone-else';
    await started(org.secret, `/v1/apps/${app.id}/proofs/${proof.id}/verify`);
    const failed = (await get(org.secret, `/v1/apps/${app.id}/proofs/${proof.id}`).expect(200)).body as Record<string, unknown>;
    expect(failed).toMatchObject({ state: 'failed', failureReason: "the answer at /.well-known/openbot-app-proof is not the proof's token" });
    // The reason never repeats what the domain answered.
    expect(JSON.stringify(failed)).not.toContain('someone-else');
    await started(org.secret, `/v1/apps/${app.id}/index`);
    expect((await get(org.secret, '/v1/app-index').expect(200)).body).toEqual({ data: [], next: null });
  });

  it('a failed verification says why: the HTTP status, or that the domain could not be reached; a later success clears it', async () => {
    const org = await t.createOrganization('Proof reasons');
    const app = (await post(org.secret, '/v1/apps', { url: sdk.url }).expect(201)).body as { id: string };
    const proof = (await post(org.secret, `/v1/apps/${app.id}/proofs`, { domain: proofHost }).expect(201)).body as { id: string; token: string; failureReason: unknown };
    expect(proof.failureReason).toBeNull();
    const read = async (id: string) => (await get(org.secret, `/v1/apps/${app.id}/proofs/${id}`).expect(200)).body as { state: string; failureReason: string | null };
    served = proof.token;
    servedStatus = 404;
    try {
      await started(org.secret, `/v1/apps/${app.id}/proofs/${proof.id}/verify`);
    } finally {
      servedStatus = 200;
    }
    expect(await read(proof.id)).toMatchObject({ state: 'failed', failureReason: 'the domain answered HTTP 404 at /.well-known/openbot-app-proof' });
    const listed = (await get(org.secret, `/v1/apps/${app.id}/proofs`).expect(200)).body as { data: Array<{ id: string; failureReason: string | null }> };
    expect(listed.data.find((p) => p.id === proof.id)!.failureReason).toBe('the domain answered HTTP 404 at /.well-known/openbot-app-proof');
    await started(org.secret, `/v1/apps/${app.id}/proofs/${proof.id}/verify`);
    expect(await read(proof.id)).toMatchObject({ state: 'verified', failureReason: null });

    // Nothing listens on the port: the connection is refused.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedHost = `127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const unreachable = (await post(org.secret, `/v1/apps/${app.id}/proofs`, { domain: closedHost }).expect(201)).body as { id: string };
    await started(org.secret, `/v1/apps/${app.id}/proofs/${unreachable.id}/verify`);
    expect(await read(unreachable.id)).toMatchObject({ state: 'failed', failureReason: 'the domain refused the connection' });
  });

  it('[IDN-06] a crawl whose member was removed while it read writes no index entry and updates none', async () => {
    const org = await t.createOrganization('Index caller');
    const app = (await post(org.secret, '/v1/apps', { url: sdk.url }).expect(201)).body as { id: string };
    await prove(org.secret, app.id);
    const entries = () => t.database.query<{ indexedAt: Date }>('SELECT indexed_at AS "indexedAt" FROM app_index_entries WHERE app_id = $1', [app.id]);

    // Never crawled: the removed member's crawl adds no entry.
    await removedWhileRunning(org.secret, await addMember(t, org.organizationId, 'admin'), `/v1/apps/${app.id}/index`, 'crawl');
    expect(await entries()).toEqual([]);
    expect((await get(org.secret, '/v1/app-index').expect(200)).body).toEqual({ data: [], next: null });

    // A crawl of a current member writes it; another removed member's crawl leaves it as it was.
    await started(org.secret, `/v1/apps/${app.id}/index`);
    const [written] = await entries();
    expect(written).toEqual({ indexedAt: expect.any(Date) });
    await removedWhileRunning(org.secret, await addMember(t, org.organizationId, 'admin'), `/v1/apps/${app.id}/index`, 'crawl');
    expect(await entries()).toEqual([written]);
  });

  it('[IDN-06] a verification whose member was removed while it fetched marks the proof neither verified nor failed', async () => {
    const org = await t.createOrganization('Proof caller');
    const app = (await post(org.secret, '/v1/apps', { url: sdk.url }).expect(201)).body as { id: string };
    const proof = (await post(org.secret, `/v1/apps/${app.id}/proofs`, { domain: proofHost }).expect(201)).body as { id: string; token: string };
    const read = async () => (await get(org.secret, `/v1/apps/${app.id}/proofs/${proof.id}`).expect(200)).body as Record<string, unknown>;
    const verify = `/v1/apps/${app.id}/proofs/${proof.id}/verify`;

    // The domain serves the token: the fetch found it verified, but the proof stays pending.
    served = proof.token;
    await removedWhileRunning(org.secret, await addMember(t, org.organizationId, 'admin'), verify, 'fetch');
    expect(await read()).toMatchObject({ state: 'pending', failureReason: null });
    // The domain serves another token: the fetch found it failed, and the proof still stays pending.
    served = 'someone-else';
    await removedWhileRunning(org.secret, await addMember(t, org.organizationId, 'admin'), verify, 'fetch');
    expect(await read()).toMatchObject({ state: 'pending', failureReason: null });
    expect(await t.database.query('SELECT verified_at AS "verifiedAt" FROM app_proofs WHERE id = $1', [proof.id])).toEqual([{ verifiedAt: null }]);

    // A current member's verification applies its result.
    served = proof.token;
    await started(org.secret, verify);
    expect(await read()).toMatchObject({ state: 'verified', failureReason: null });
  });

  it('[DEVT-01] a developer test runs as an execution of its original caller, streamed as events, and ends only after its connection closed', async () => {
    const org = await t.createOrganization('Developer test');
    const app = (await post(org.secret, '/v1/apps', { url: legacy.url }).expect(201)).body as { id: string };
    // Without a verified proof of the App's domain it is refused.
    expectDeclared(await post(org.secret, `/v1/apps/${app.id}/developer-tests`, {}), 409, 'AppProofRequired');
    await prove(org.secret, app.id);
    expectDeclared(await post(org.secret, `/v1/apps/${app.id}/developer-tests`, { remote: 'http://127.0.0.1:1/other' }), 400, 'InvalidInput');

    const startedTest = (await post(org.secret, `/v1/apps/${app.id}/developer-tests`, {}).expect(202)).body as { id: string; executionId: string };
    // The command stored the caller and the execution ID with the test, before the run.
    expect(await t.database.query('SELECT member_id AS "memberId", execution_id AS "executionId" FROM app_developer_tests WHERE id = $1', [startedTest.id])).toEqual([{ memberId: org.memberId, executionId: startedTest.executionId }]);
    const execution = await waitForExecutionState(t, org.secret, startedTest.executionId, 'completed');
    expect(execution.resource).toEqual({ type: 'app-developer-test', id: startedTest.id });

    const test = (await get(org.secret, `/v1/apps/${app.id}/developer-tests/${startedTest.id}`).expect(200)).body as Record<string, unknown>;
    expect(test).toMatchObject({ id: startedTest.id, state: 'completed', executionId: startedTest.executionId, memberId: org.memberId, tools: ['add_numbers'], connection: { state: 'ready', era: 'legacy', closed: 'deleted' } });
    // Its connection was closed by the run (the legacy session was ended) before it ended.
    expect(legacy.openSessions()).toBe(0);
    const events = (await get(org.secret, `/v1/executions/${startedTest.executionId}/events`).expect(200)).body as { events: Array<{ type: string; payload?: unknown; data?: unknown }> };
    const types = events.events.map((e) => e.type);
    expect(types.indexOf('developer_test.connected')).toBeGreaterThanOrEqual(0);
    expect(types.indexOf('developer_test.tools')).toBeGreaterThan(types.indexOf('developer_test.connected'));
    expect(types.indexOf('developer_test.closed')).toBeGreaterThan(types.indexOf('developer_test.tools'));
    expect(types.indexOf('execution.ended')).toBeGreaterThan(types.indexOf('developer_test.closed'));

    // Another organization reaches none of it; a member without apps.manage cannot start one.
    const other = await t.createOrganization('Developer test other');
    expectDeclared(await get(other.secret, `/v1/apps/${app.id}/developer-tests/${startedTest.id}`), 404, 'DeveloperTestNotFound');
    expectDeclared(await post(other.secret, `/v1/apps/${app.id}/developer-tests`, {}), 404, 'AppNotFound');
    const reader = await addMember(t, org.organizationId, 'member');
    expectDeclared(await post(reader.secret, `/v1/apps/${app.id}/developer-tests`, {}), 403, 'Forbidden');
  });
});

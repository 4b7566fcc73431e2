import { randomBytes } from 'node:crypto';
import { startSdkServer, type RunningSdkServer, type TestTool } from '../fakes/mcp-test-servers';
import { expectDeclared } from '../support/api-assertions';
import { addMember, bearer } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { waitForExecutionState } from '../support/tool-probes';

/**
 * Views (MCP Apps) and the tool calls made from them (FW-05): a View is a stored binding with the
 * declarations of its connection's tools; its calls are executions that go through the checks of a
 * model's call. Two app instances (two nodes) share one database: a restart of one does not reset
 * the other's work or a valid View.
 */
describe('Views and View tool calls', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let server: RunningSdkServer;
  const masterKey = { id: 'test1', key: randomBytes(32) };
  const ran: string[] = [];
  const tool = (name: string, visibility?: string[]): TestTool => ({
    name,
    inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
    meta: { ui: { resourceUri: 'ui://weather/forecast.html', ...(visibility ? { visibility } : {}) } },
    handler: async (args) => {
      ran.push(name);
      return { text: `${name}: sunny in ${String(args.city)}` };
    },
  });
  let tools: TestTool[];

  const start = (nodeId: string) => startTestApp({ database: db, masterKey, env: { OPENBOT_NODE_ID: nodeId, OPENBOT_LEASE_SECONDS: '2' } });

  beforeAll(async () => {
    db = await createTestDatabase();
    tools = [tool('forecast'), tool('refresh', ['app']), tool('summarize', ['model'])];
    server = await startSdkServer({
      era: 'legacy',
      tools: () => tools,
      resources: [{ uri: 'ui://weather/forecast.html', html: '<p>Forecast</p>', meta: { ui: { csp: { connectDomains: ['https://api.weather.example'] } } } }],
    });
    [a, b] = [await start('view-node-a'), await start('view-node-b')];
  });
  afterAll(async () => {
    await server?.close();
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  async function setup(t: TestApp): Promise<{ secret: string; organizationId: string; connectionId: string }> {
    const org = await t.createOrganization(`Views ${randomBytes(3).toString('hex')}`);
    const app = (await t.http().post('/v1/apps').set('authorization', bearer(org.secret)).send({ url: server.url }).expect(201)).body as { id: string };
    const connection = (await t.http().post(`/v1/apps/${app.id}/connections`).set('authorization', bearer(org.secret)).send({}).expect(201)).body as { id: string };
    return { secret: org.secret, organizationId: org.organizationId, connectionId: connection.id };
  }

  async function viewCall(t: TestApp, secret: string, viewId: string, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const started = (await t.http().post(`/v1/views/${viewId}/calls`).set('authorization', bearer(secret)).send({ name, arguments: args }).expect(202)).body as { executionId: string };
    await waitForExecutionState(t, secret, started.executionId, 'completed', 20_000);
    return (await t.http().get(`/v1/views/${viewId}/calls/${started.executionId}`).set('authorization', bearer(secret)).expect(200)).body as Record<string, unknown>;
  }

  it('[FW-05] a View is opened as a stored binding; its tool calls run as executions with the checks of a model call: an app-visible tool runs, a model-only tool is refused and never sent', async () => {
    const { secret, connectionId, organizationId } = await setup(a);
    const opened = await a.http().post(`/v1/connections/${connectionId}/tools/forecast/views`).set('authorization', bearer(secret)).expect(201);
    expect(opened.body).toMatchObject({ id: expect.any(String), connectionId, toolName: 'forecast', revision: 1, uri: 'ui://weather/forecast.html', html: '<p>Forecast</p>', csp: { connectDomains: ['https://api.weather.example'] } });
    const viewId = (opened.body as { id: string }).id;
    expect((await a.http().get(`/v1/views/${viewId}`).set('authorization', bearer(secret)).expect(200)).body).toMatchObject({ id: viewId, connectionId, toolName: 'forecast', revision: 1 });

    ran.length = 0;
    expect(await viewCall(a, secret, viewId, 'forecast', { city: 'Oslo' })).toMatchObject({ state: 'completed', result: { isError: false, text: 'forecast: sunny in Oslo' } });
    // An app-only tool is callable from a View.
    expect(await viewCall(a, secret, viewId, 'refresh', { city: 'Rome' })).toMatchObject({ result: { isError: false, text: 'refresh: sunny in Rome' } });
    // A model-only tool, or a name the View does not have, is refused without a request.
    const calls = server.requests.filter((r) => r.rpc === 'tools/call').length;
    expect(await viewCall(a, secret, viewId, 'summarize')).toMatchObject({ result: { isError: true, text: expect.stringMatching(/may not be called from a View/) }, category: 'forbidden' });
    expect(await viewCall(a, secret, viewId, 'nothing-like-it')).toMatchObject({ result: { isError: true }, category: 'unavailable' });
    expect(server.requests.filter((r) => r.rpc === 'tools/call')).toHaveLength(calls);
    expect(ran).toEqual(['forecast', 'refresh']);

    // Only its member may use it; another organization gets 404 everywhere.
    const member = await addMember(a, organizationId);
    expectDeclared(await a.http().get(`/v1/views/${viewId}`).set('authorization', bearer(member.secret)), 404, 'ViewNotFound');
    expectDeclared(await a.http().post(`/v1/views/${viewId}/calls`).set('authorization', bearer(member.secret)).send({ name: 'forecast' }), 404, 'ViewNotFound');
    const other = await a.createOrganization('Other views org');
    expectDeclared(await a.http().post(`/v1/connections/${connectionId}/tools/forecast/views`).set('authorization', bearer(other.secret)), 404, 'ConnectionNotFound');
    expectDeclared(await a.http().get(`/v1/views/${viewId}`).set('authorization', bearer(other.secret)), 404, 'ViewNotFound');
  });

  it('[STC-12] a View call sends its saved declaration: once a check saw the tool change, the call is refused (tool_changed) and nothing is sent', async () => {
    const { secret, connectionId } = await setup(a);
    const viewId = ((await a.http().post(`/v1/connections/${connectionId}/tools/forecast/views`).set('authorization', bearer(secret)).expect(201)).body as { id: string }).id;
    const before = tools;
    tools = [{ ...tool('forecast'), inputSchema: { type: 'object', properties: { zip: { type: 'string' } } } }, ...before.slice(1)];
    try {
      const check = (await a.http().post(`/v1/connections/${connectionId}/check`).set('authorization', bearer(secret)).expect(202)).body as { executionId: string };
      await waitForExecutionState(a, secret, check.executionId, 'completed');
      const calls = server.requests.filter((r) => r.rpc === 'tools/call').length;
      expect(await viewCall(a, secret, viewId, 'forecast', { city: 'Oslo' })).toMatchObject({ result: { isError: true, text: expect.stringMatching(/changed on its server since it was saved/) }, category: 'unavailable', errorId: expect.any(String) });
      expect(server.requests.filter((r) => r.rpc === 'tools/call')).toHaveLength(calls);
    } finally {
      tools = before;
    }
  });

  it('[FW-05] an instance restart does not reset another node’s work or a valid View: B’s open session stays open and leased, and the View works on the restarted node', async () => {
    const { secret, connectionId } = await setup(b);
    const viewId = ((await b.http().post(`/v1/connections/${connectionId}/tools/forecast/views`).set('authorization', bearer(secret)).expect(201)).body as { id: string }).id;
    // B's call leaves B an open session (a physical scope it leases).
    expect(await viewCall(b, secret, viewId, 'forecast', { city: 'Lima' })).toMatchObject({ result: { isError: false } });
    const scopeOf = async () =>
      (await db.query<{ id: string; node_id: string; lease_until: Date; close_result: unknown }>('SELECT id, node_id, lease_until, close_result FROM app_connection_scopes WHERE connection_id = $1 ORDER BY opened_at', [connectionId]))[0]!;
    const open = await scopeOf();
    expect(open).toMatchObject({ node_id: 'view-node-b', close_result: null });

    // A restarts (it goes away and comes back under its node ID).
    await a.close();
    a = await start('view-node-a');
    expect(await scopeOf()).toMatchObject({ id: open.id, close_result: null });
    // The View stays valid and callable through the restarted node; B's scope was never reset.
    expect((await a.http().get(`/v1/views/${viewId}`).set('authorization', bearer(secret)).expect(200)).body).toMatchObject({ id: viewId });
    expect(await viewCall(a, secret, viewId, 'forecast', { city: 'Quito' })).toMatchObject({ result: { isError: false, text: 'forecast: sunny in Quito' } });
    const deadline = Date.now() + 15_000;
    while ((await scopeOf()).lease_until.getTime() <= open.lease_until.getTime()) {
      if (Date.now() > deadline) throw new Error('B no longer renews its scope lease');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await scopeOf()).toMatchObject({ id: open.id, node_id: 'view-node-b', close_result: null });
  });
});

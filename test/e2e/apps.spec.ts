import { McpConnection } from '@openbot/protocol';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addMember, bearer } from '../support/chat-fixture';
import { expectDeclared } from '../support/api-assertions';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';
import { eventually } from '../integration/engine/helpers';
import { Engine } from '@openbot/engine';
import { startSdkServer, startServerEverything, type RunningMcpServer, type RunningSdkServer, type TestTool } from '../fakes/mcp-test-servers';

/**
 * Apps and connections over the public API (`/v1/apps`, `/v1/connections`): registration from a
 * Server Card or a bare Streamable HTTP endpoint, connection setup per GRANT-06, full discovery
 * cached per revision, revalidation as an execution command (CONN-01), cleanup as a workflow,
 * sealed literal values, and the organization and member boundaries. The test app allows
 * 127.0.0.1 (OPENBOT_EGRESS_ALLOW), where every test server listens.
 */
describe('Apps and connections', () => {
  let t: TestApp;
  let everything: RunningMcpServer;
  let sdk: RunningSdkServer;
  let cards: Server;
  let cardBase: string;
  let sdkTools: TestTool[];
  const add: TestTool = { name: 'add', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }, handler: async (a) => ({ text: String(Number(a.a) + Number(a.b)) }) };
  const seenHeaders: Array<Record<string, string | string[] | undefined>> = [];

  beforeAll(async () => {
    t = await startTestApp();
    everything = await startServerEverything();
    sdkTools = [add];
    sdk = await startSdkServer({ era: 'modern', tools: () => sdkTools });
    cards = createServer((req, res) => {
      seenHeaders.push(req.headers);
      const card = {
        name: 'io.example/everything',
        title: 'Everything',
        description: 'The reference server',
        version: '2026.8.31',
        remotes: [
          { type: 'streamable-http', url: everything.url, headers: [{ name: 'X-Api-Key', isSecret: true, isRequired: true }] },
          { type: 'streamable-http', url: sdk.url.replace('/mcp', '/{path}'), variables: { path: { choices: ['mcp', 'other'] } } },
        ],
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card));
    });
    await new Promise<void>((resolve) => cards.listen(0, '127.0.0.1', resolve));
    cardBase = `http://127.0.0.1:${(cards.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await everything?.close();
    await sdk?.close();
    await new Promise<void>((resolve) => cards.close(() => resolve()));
    await t?.close();
  });

  const post = (secret: string, path: string, body: unknown) => t.http().post(path).set('authorization', bearer(secret)).send(body as object);
  const get = (secret: string, path: string) => t.http().get(path).set('authorization', bearer(secret));

  it('registers an App from its Server Card, read once', async () => {
    const org = await t.createOrganization('Cards');
    const res = await post(org.secret, '/v1/apps', { url: `${cardBase}/server-card` }).expect(201);
    expect(res.body).toMatchObject({ name: 'io.example/everything', title: 'Everything', description: 'The reference server', card: true });
    expect((res.body as { remotes: unknown[] }).remotes).toHaveLength(2);
    await get(org.secret, `/v1/apps/${(res.body as { id: string }).id}`).expect(200);
  });

  it('registers a bare Streamable HTTP endpoint as one remote, and refuses an unreachable URL with a 400 on url', async () => {
    const org = await t.createOrganization('Bare');
    const res = await post(org.secret, '/v1/apps', { url: everything.url }).expect(201);
    expect(res.body).toMatchObject({ card: false, remotes: [{ type: 'streamable-http', url: everything.url, headers: [], variables: {} }] });
    const closed = await startSdkServer({ era: 'modern', tools: () => [] });
    await closed.close();
    const refused = await post(org.secret, '/v1/apps', { url: closed.url });
    expectDeclared(refused, 400, 'InvalidInput');
    expect((refused.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['url']);
  });

  it('the same URL again is 409 AppExists naming the existing App, not read again; at once, one of two registrations wins; another organization may register it', async () => {
    const org = await t.createOrganization('Twice');
    const url = `${cardBase}/twice`;
    const first = (await post(org.secret, '/v1/apps', { url }).expect(201)).body as { id: string };
    const reads = seenHeaders.length;
    const again = await post(org.secret, '/v1/apps', { url: ` ${url} ` });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ type: 'AppExists', message: `An App with this URL is already registered: ${first.id}.`, appId: first.id });
    expect(seenHeaders).toHaveLength(reads);

    const raced = `${cardBase}/raced`;
    const both = await Promise.all([post(org.secret, '/v1/apps', { url: raced }), post(org.secret, '/v1/apps', { url: raced })]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    const winner = both.find((r) => r.status === 201)!.body as { id: string };
    expect(both.find((r) => r.status === 409)!.body).toMatchObject({ type: 'AppExists', appId: winner.id });
    const listed = (await get(org.secret, '/v1/apps').expect(200)).body as { data: Array<{ id: string; url: string }> };
    expect(listed.data.map((a) => a.url).sort()).toEqual([raced, url].sort());

    const other = await t.createOrganization('Twice elsewhere');
    const theirs = (await post(other.secret, '/v1/apps', { url }).expect(201)).body as { id: string };
    expect(theirs.id).not.toBe(first.id);
  });

  it('[GRANT-06] setup refreshes the card once, checks the selected remote and its values, probes, and saves that prepared connection', async () => {
    const org = await t.createOrganization('Setup');
    const app = (await post(org.secret, '/v1/apps', { url: `${cardBase}/server-card` }).expect(201)).body as { id: string };
    const before = seenHeaders.length;
    // The first remote needs its X-Api-Key header.
    const missing = await post(org.secret, `/v1/apps/${app.id}/connections`, {});
    expectDeclared(missing, 400, 'InvalidInput');
    expect((missing.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['headers.X-Api-Key']);
    const badChoice = await post(org.secret, `/v1/apps/${app.id}/connections`, { remote: sdk.url.replace('/mcp', '/{path}'), variables: { path: 'nope' } });
    expect((badChoice.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['variables.path']);
    const created = await post(org.secret, `/v1/apps/${app.id}/connections`, { headers: { 'X-Api-Key': 'literal-secret-1234' } }).expect(201);
    expect(created.body).toEqual({ id: expect.any(String), appId: app.id, state: 'ready', revision: 1 });
    // The card was read again once per setup attempt, no more.
    expect(seenHeaders.length - before).toBe(3);
    const read = await get(org.secret, `/v1/connections/${(created.body as { id: string }).id}`).expect(200);
    expect(read.body).toMatchObject({ owner: 'organization', remote: everything.url, headers: { 'X-Api-Key': null }, era: 'legacy', state: 'ready', revision: 1 });
    expect(JSON.stringify(read.body)).not.toContain('literal-secret-1234');
    const [row] = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM app_connections c WHERE strpos(c::text, 'literal-secret-1234') > 0`);
    expect(row!.n).toBe(0);

    const second = await post(org.secret, `/v1/apps/${app.id}/connections`, { remote: sdk.url.replace('/mcp', '/{path}'), variables: { path: 'mcp' } }).expect(201);
    expect((await get(org.secret, `/v1/connections/${(second.body as { id: string }).id}`).expect(200)).body).toMatchObject({ era: 'modern', protocolVersion: '2026-07-28', variables: { path: null } });
  });

  it('a server that cannot be reached is saved as failed, with a category and an error ID', async () => {
    const org = await t.createOrganization('Down');
    const closed = await startSdkServer({ era: 'modern', tools: () => [] });
    const app = (await post(org.secret, '/v1/apps', { url: closed.url }).expect(201)).body as { id: string };
    await closed.close();
    const created = await post(org.secret, `/v1/apps/${app.id}/connections`, {}).expect(201);
    expect(created.body).toMatchObject({ state: 'failed', revision: 1 });
    const read = await get(org.secret, `/v1/connections/${(created.body as { id: string }).id}`).expect(200);
    expect(read.body).toMatchObject({ state: 'failed', category: 'unavailable', errorId: expect.any(String) });
  });

  it('[STC-12] full discovery is a separate operation, cached per connection and revision', async () => {
    const org = await t.createOrganization('Discovery');
    const app = (await post(org.secret, '/v1/apps', { url: everything.url }).expect(201)).body as { id: string };
    const connection = (await post(org.secret, `/v1/apps/${app.id}/connections`, {}).expect(201)).body as { id: string };
    const first = await get(org.secret, `/v1/connections/${connection.id}/tools?limit=200`).expect(200);
    const names = (first.body as { data: Array<{ name: string }> }).data.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    const paged = await get(org.secret, `/v1/connections/${connection.id}/tools?limit=2`).expect(200);
    expect((paged.body as { data: unknown[]; next: string }).data).toHaveLength(2);
    const rest = await get(org.secret, `/v1/connections/${connection.id}/tools?limit=200&after=${(paged.body as { next: string }).next}`).expect(200);
    expect((rest.body as { data: unknown[] }).data).toHaveLength(names.length - 2);
    const [cached] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM app_connection_tools WHERE connection_id = $1', [connection.id]);
    expect(cached!.n).toBe(1);
  });

  it('[CONN-01] a check is an execution command: a changed tool list raises the revision; an unchanged one does not', async () => {
    const org = await t.createOrganization('Check');
    const app = (await post(org.secret, '/v1/apps', { url: sdk.url }).expect(201)).body as { id: string };
    const connection = (await post(org.secret, `/v1/apps/${app.id}/connections`, {}).expect(201)).body as { id: string };
    await get(org.secret, `/v1/connections/${connection.id}/tools`).expect(200);
    const check = async (): Promise<void> => {
      const res = await post(org.secret, `/v1/connections/${connection.id}/check`, {}).expect(202);
      await waitForExecutionState(t, org.secret, (res.body as { executionId: string }).executionId, 'completed');
    };
    await check();
    expect((await get(org.secret, `/v1/connections/${connection.id}`).expect(200)).body).toMatchObject({ state: 'ready', revision: 1 });
    sdkTools = [{ ...add, description: 'adds two numbers, now differently' }];
    try {
      await check();
    } finally {
      sdkTools = [add];
    }
    expect((await get(org.secret, `/v1/connections/${connection.id}`).expect(200)).body).toMatchObject({ state: 'ready', revision: 2 });
    const tools = await get(org.secret, `/v1/connections/${connection.id}/tools`).expect(200);
    expect((tools.body as { data: Array<{ description: string }> }).data[0]!.description).toBe('adds two numbers, now differently');
  });

  /**
   * Starts a check of the connection as `secret` and holds it once its outside read is saved, before
   * its final transaction (CONN-01): answers its execution ID and what lets it go on.
   */
  const heldCheck = async (secret: string, connectionId: string): Promise<{ executionId: string; release: () => void }> => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    t.app.get(Engine).faults.arm('call.result.committed', { kind: 'pause', until: held }, { times: 1, when: (c) => c.callKey?.endsWith('probe') === true });
    const executionId = ((await post(secret, `/v1/connections/${connectionId}/check`, {}).expect(202)).body as { executionId: string }).executionId;
    await eventually(async () => {
      const calls = await t.database.query<{ status: string }>('SELECT status FROM execution_calls WHERE execution_id = $1', [executionId]);
      return calls.length === 1 && calls[0]!.status === 'succeeded';
    }, 'the held check to save its read');
    return { executionId, release };
  };

  it('[CONN-01] a check proposes from its saved read; the final transaction refuses it when a concurrent check raised the revision; the result stays readable after the connection is removed', async () => {
    const org = await t.createOrganization('Check race');
    const app = (await post(org.secret, '/v1/apps', { url: sdk.url }).expect(201)).body as { id: string };
    const connection = (await post(org.secret, `/v1/apps/${app.id}/connections`, {}).expect(201)).body as { id: string };
    await get(org.secret, `/v1/connections/${connection.id}/tools`).expect(200);
    const engine = t.app.get(Engine);
    const check = async (): Promise<string> => ((await post(org.secret, `/v1/connections/${connection.id}/check`, {}).expect(202)).body as { executionId: string }).executionId;
    sdkTools = [{ ...add, description: 'adds two numbers, now differently' }];
    try {
      // The first check saves its read (revision 1, a changed tool list) and is held before its end.
      const { executionId: slow, release } = await heldCheck(org.secret, connection.id);
      // Meanwhile a second check applies the same change: revision 2.
      const fast = await check();
      await waitForExecutionState(t, org.secret, fast, 'completed');
      expect((await get(org.secret, `/v1/connections/${connection.id}`).expect(200)).body).toMatchObject({ revision: 2 });
      release();
      await waitForExecutionState(t, org.secret, slow, 'completed');
      // Its proposal named revision 1: the final transaction applied nothing (no revision 3, no third tool list).
      expect(await engine.result(slow)).toEqual({ connectionId: connection.id, state: 'ready', checkedRevision: 1, changed: true });
      expect((await get(org.secret, `/v1/connections/${connection.id}`).expect(200)).body).toMatchObject({ state: 'ready', revision: 2 });
      const cached = await t.database.query<{ revision: number }>('SELECT revision FROM app_connection_tools WHERE connection_id = $1 ORDER BY revision', [connection.id]);
      expect(cached.map((c) => c.revision)).toEqual([1, 2]);

      // Removing the connection keeps both checks and their results readable.
      const deleted = await t.http().delete(`/v1/connections/${connection.id}`).set('authorization', bearer(org.secret)).expect(202);
      await waitForExecutionState(t, org.secret, (deleted.body as { executionId: string }).executionId, 'completed');
      expect(await t.database.query('SELECT 1 FROM app_connections WHERE id = $1', [connection.id])).toEqual([]);
      expect(await waitForExecutionState(t, org.secret, slow, 'completed')).toMatchObject({ state: 'completed' });
      expect(await engine.result(slow)).toEqual({ connectionId: connection.id, state: 'ready', checkedRevision: 1, changed: true });
      expect(await engine.result(fast)).toEqual({ connectionId: connection.id, state: 'ready', checkedRevision: 1, changed: true });
    } finally {
      sdkTools = [add];
    }
  });

  it('[CONN-01] the final transaction checks the caller: a check whose member was removed while it read changes nothing', async () => {
    const org = await t.createOrganization('Check caller');
    const member = await addMember(t, org.organizationId, 'admin');
    const app = (await post(org.secret, '/v1/apps', { url: sdk.url }).expect(201)).body as { id: string };
    const connection = (await post(org.secret, `/v1/apps/${app.id}/connections`, {}).expect(201)).body as { id: string };
    await get(org.secret, `/v1/connections/${connection.id}/tools`).expect(200);
    sdkTools = [{ ...add, description: 'adds two numbers, now differently' }];
    try {
      const { executionId: slow, release } = await heldCheck(member.secret, connection.id);
      await t.http().delete(`/v1/members/${member.memberId}`).set('authorization', bearer(org.secret)).expect(200);
      release();
      await eventually(async () => {
        const [row] = await t.database.query<{ state: string }>('SELECT state FROM executions WHERE id = $1', [slow]);
        return ['completed', 'failed', 'cancelled', 'interrupted'].includes(row!.state);
      }, 'the held check to end');
      expect((await get(org.secret, `/v1/connections/${connection.id}`).expect(200)).body).toMatchObject({ revision: 1 });
      const cached = await t.database.query<{ revision: number }>('SELECT revision FROM app_connection_tools WHERE connection_id = $1 ORDER BY revision', [connection.id]);
      expect(cached.map((c) => c.revision)).toEqual([1]);
    } finally {
      sdkTools = [add];
    }
  });

  it('[CONN-01] the final transaction checks the grant generation: a check whose connection got a new grant while it read changes nothing', async () => {
    const org = await t.createOrganization('Check generation');
    const app = (await post(org.secret, '/v1/apps', { url: sdk.url }).expect(201)).body as { id: string };
    const connection = (await post(org.secret, `/v1/apps/${app.id}/connections`, {}).expect(201)).body as { id: string };
    await get(org.secret, `/v1/connections/${connection.id}/tools`).expect(200);
    const engine = t.app.get(Engine);
    sdkTools = [{ ...add, description: 'adds two numbers, now differently' }];
    try {
      const { executionId: slow, release } = await heldCheck(org.secret, connection.id);
      // What installing a new grant does to the connection (code-exchange.workflow.ts): its generation rises.
      await t.database.query('UPDATE app_connections SET generation = generation + 1 WHERE id = $1', [connection.id]);
      release();
      await waitForExecutionState(t, org.secret, slow, 'completed');
      expect(await engine.result(slow)).toMatchObject({ checkedRevision: 1, changed: true });
      expect((await get(org.secret, `/v1/connections/${connection.id}`).expect(200)).body).toMatchObject({ revision: 1 });
      const cached = await t.database.query<{ revision: number }>('SELECT revision FROM app_connection_tools WHERE connection_id = $1 ORDER BY revision', [connection.id]);
      expect(cached.map((c) => c.revision)).toEqual([1]);
    } finally {
      sdkTools = [add];
    }
  });

  it('a member connection is seen only by its member, owners and admins; an organization connection needs apps.manage', async () => {
    const org = await t.createOrganization('Members');
    const app = (await post(org.secret, '/v1/apps', { url: sdk.url }).expect(201)).body as { id: string };
    const member = await addMember(t, org.organizationId);
    const other = await addMember(t, org.organizationId);
    expectDeclared(await post(member.secret, `/v1/apps/${app.id}/connections`, {}), 403, 'Forbidden');
    const own = (await post(member.secret, `/v1/apps/${app.id}/connections`, { owner: 'member' }).expect(201)).body as { id: string };
    expect((await get(member.secret, `/v1/connections/${own.id}`).expect(200)).body).toMatchObject({ owner: 'member', memberId: member.memberId });
    await get(org.secret, `/v1/connections/${own.id}`).expect(200);
    expectDeclared(await get(other.secret, `/v1/connections/${own.id}`), 404, 'ConnectionNotFound');
    expect(((await get(other.secret, '/v1/connections').expect(200)).body as { data: unknown[] }).data).toEqual([]);
    expectDeclared(await post(member.secret, '/v1/apps', { url: sdk.url }), 403, 'Forbidden');
  });

  it("[IDN-08] another organization's Apps and connections answer 404 in every route", async () => {
    const a = await t.createOrganization('Owner org');
    const b = await t.createOrganization('Other org');
    const app = (await post(a.secret, '/v1/apps', { url: sdk.url }).expect(201)).body as { id: string };
    const connection = (await post(a.secret, `/v1/apps/${app.id}/connections`, {}).expect(201)).body as { id: string };
    expectDeclared(await get(b.secret, `/v1/apps/${app.id}`), 404, 'AppNotFound');
    expectDeclared(await t.http().delete(`/v1/apps/${app.id}`).set('authorization', bearer(b.secret)), 404, 'AppNotFound');
    expectDeclared(await post(b.secret, `/v1/apps/${app.id}/connections`, {}), 404, 'AppNotFound');
    expectDeclared(await get(b.secret, `/v1/connections/${connection.id}`), 404, 'ConnectionNotFound');
    expectDeclared(await get(b.secret, `/v1/connections/${connection.id}/tools`), 404, 'ConnectionNotFound');
    expectDeclared(await post(b.secret, `/v1/connections/${connection.id}/check`, {}), 404, 'ConnectionNotFound');
    expectDeclared(await t.http().delete(`/v1/connections/${connection.id}`).set('authorization', bearer(b.secret)), 404, 'ConnectionNotFound');
    expect(((await get(b.secret, '/v1/apps').expect(200)).body as { data: unknown[] }).data).toEqual([]);
    expect(((await get(b.secret, '/v1/connections').expect(200)).body as { data: unknown[] }).data).toEqual([]);
    await get(a.secret, `/v1/connections/${connection.id}`).expect(200);
  });

  it('[RES-07] deleting a connection answers 202, hides it at once, and a cleanup removes it; the App is 409 AppHasConnections until then', async () => {
    const org = await t.createOrganization('Cleanup');
    const app = (await post(org.secret, '/v1/apps', { url: everything.url }).expect(201)).body as { id: string };
    const connection = (await post(org.secret, `/v1/apps/${app.id}/connections`, {}).expect(201)).body as { id: string };
    expectDeclared(await t.http().delete(`/v1/apps/${app.id}`).set('authorization', bearer(org.secret)), 409, 'AppHasConnections');
    const deleted = await t.http().delete(`/v1/connections/${connection.id}`).set('authorization', bearer(org.secret)).expect(202);
    expectDeclared(await get(org.secret, `/v1/connections/${connection.id}`), 404, 'ConnectionNotFound');
    await waitForExecutionState(t, org.secret, (deleted.body as { executionId: string }).executionId, 'completed');
    const [left] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM app_connections WHERE id = $1', [connection.id]);
    expect(left!.n).toBe(0);
    await t.http().delete(`/v1/apps/${app.id}`).set('authorization', bearer(org.secret)).expect(200);
  });
});

describe('Views (MCP Apps ui:// resources)', () => {
  let t: TestApp;
  let server: RunningSdkServer;

  beforeAll(async () => {
    t = await startTestApp();
    server = await startSdkServer({
      era: 'modern',
      tools: () => [
        { name: 'forecast', inputSchema: { type: 'object' }, meta: { ui: { resourceUri: 'ui://weather/forecast.html' } }, handler: async () => ({ text: 'sunny' }) },
        { name: 'plain', inputSchema: { type: 'object' }, handler: async () => ({ text: 'ok' }) },
      ],
      resources: [{ uri: 'ui://weather/forecast.html', html: '<p>Forecast</p>', meta: { ui: { csp: { connectDomains: ['https://api.weather.example'] }, permissions: { geolocation: {} } } } }],
    });
  });
  afterAll(async () => {
    await server?.close();
    await t?.close();
  });

  it("a tool's View is answered with its HTML, CSP and permissions; a tool without one is 404 ViewNotFound; another organization gets 404", async () => {
    const org = await t.createOrganization('Views');
    const auth = bearer(org.secret);
    const app = (await t.http().post('/v1/apps').set('authorization', auth).send({ url: server.url }).expect(201)).body as { id: string };
    const connection = (await t.http().post(`/v1/apps/${app.id}/connections`).set('authorization', auth).send({}).expect(201)).body as { id: string };
    const view = await t.http().get(`/v1/connections/${connection.id}/tools/forecast/view`).set('authorization', auth).expect(200);
    expect(view.body).toEqual({
      toolName: 'forecast',
      uri: 'ui://weather/forecast.html',
      mimeType: 'text/html;profile=mcp-app',
      html: '<p>Forecast</p>',
      csp: { connectDomains: ['https://api.weather.example'] },
      permissions: { geolocation: {} },
      domain: null,
    });
    expectDeclared(await t.http().get(`/v1/connections/${connection.id}/tools/plain/view`).set('authorization', auth), 404, 'ViewNotFound');
    const other = await t.createOrganization('Other views');
    expectDeclared(await t.http().get(`/v1/connections/${connection.id}/tools/forecast/view`).set('authorization', bearer(other.secret)), 404, 'ConnectionNotFound');
  });
});

describe('bad servers', () => {
  let t: TestApp;
  let server: RunningSdkServer;
  const noop = async () => ({ text: 'ok' });

  beforeAll(async () => {
    t = await startTestApp();
    server = await startSdkServer({
      era: 'modern',
      tools: () => [
        { name: 'files.read', inputSchema: { type: 'object' }, handler: noop },
        // Served with a string schema (below): the SDK would not register one.
        { name: 'not-an-object', inputSchema: { type: 'object', title: 'BROKEN' }, handler: noop },
        ...Array.from({ length: 130 }, (_, i) => ({ name: `t${String(i).padStart(3, '0')}`, inputSchema: { type: 'object' }, handler: noop })),
      ],
      rewrite: (body) => {
        const broken = (json: string): string => {
          const message = JSON.parse(json) as { result?: { tools?: Array<{ name: string; inputSchema: unknown }> } };
          for (const tool of message.result?.tools ?? []) if (tool.name === 'not-an-object') tool.inputSchema = { type: 'string' };
          return JSON.stringify(message);
        };
        // A JSON answer, or an event stream whose `data:` lines carry the messages.
        if (body.trimStart().startsWith('{')) return broken(body);
        return body.replace(/^data: (.+)$/gm, (_line, json: string) => `data: ${broken(json)}`);
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await t?.close();
  });

  it('an invalid tool name is renamed per the contract, a schema that is not an object is refused on its own, and a list over the cap is cut with a warning', async () => {
    const org = await t.createOrganization('Bad server');
    const auth = bearer(org.secret);
    const app = (await t.http().post('/v1/apps').set('authorization', auth).send({ url: server.url }).expect(201)).body as { id: string };
    const connection = (await t.http().post(`/v1/apps/${app.id}/connections`).set('authorization', auth).send({}).expect(201)).body as { id: string };
    const tools = (await t.http().get(`/v1/connections/${connection.id}/tools?limit=200`).set('authorization', auth).expect(200)).body as { data: Array<{ name: string }> };
    expect(tools.data).toHaveLength(128);
    expect(tools.data.map((tool) => tool.name)).not.toContain('not-an-object');
    const read = (await t.http().get(`/v1/connections/${connection.id}`).set('authorization', auth).expect(200)).body as { warnings: string[] };
    expect(read.warnings).toEqual(['the server lists more tools than the cap; only the first 128 are used', 'tool "not-an-object" is refused: inputSchema must have type "object"']);
    await t.http().post('/v1/model-providers').set('authorization', auth).send({ name: 'fake', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' }).expect(201);
    const bot = await t
      .http()
      .post('/v1/bots')
      .set('authorization', auth)
      .send({ name: 'Renamed', model: 'fake/m', instructions: '', tools: [{ kind: 'app', connectionId: connection.id, tools: ['files.read', 't000'] }] })
      .expect(201);
    const prefix = connection.id.replace(/-/g, '').slice(-8);
    expect((bot.body as { tools: Array<{ declarations: Array<{ name: string; serverName: string }> }> }).tools[0]!.declarations).toEqual([
      { name: `${prefix}_files_read`, serverName: 'files.read', description: 'files.read', revision: 1 },
      { name: 't000', serverName: 't000', description: 't000', revision: 1 },
    ]);
    const refused = await t.http().post('/v1/bots').set('authorization', auth).send({ name: 'Refused', model: 'fake/m', instructions: '', tools: [{ kind: 'app', connectionId: connection.id, tools: ['not-an-object'] }] });
    expectDeclared(refused, 400, 'InvalidInput');
    expect((refused.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['tools.0.tools.0']);
  });
});

describe('connection cleanup and physical scopes', () => {
  let t: TestApp;
  let legacy: RunningSdkServer;

  beforeAll(async () => {
    t = await startTestApp();
    legacy = await startSdkServer({ era: 'legacy', tools: () => [{ name: 'noop', inputSchema: { type: 'object' }, handler: async () => ({ text: 'ok' }) }] });
  });
  afterAll(async () => {
    await legacy?.close();
    await t?.close();
  });

  it('[RES-07] cleanup closes every scope whose owner is gone — a replaced route’s old session included — with DELETE, then removes the connection', async () => {
    const org = await t.createOrganization('Scopes');
    const auth = bearer(org.secret);
    const app = (await t.http().post('/v1/apps').set('authorization', auth).send({ url: legacy.url }).expect(201)).body as { id: string };
    const connection = (await t.http().post(`/v1/apps/${app.id}/connections`).set('authorization', auth).send({}).expect(201)).body as { id: string };
    expect(legacy.openSessions()).toBe(0); // the probe closed its own session
    // Two sessions left open by owners that died (their leases ran out), one on a route since replaced.
    const left = [await McpConnection.open({ url: legacy.url, fetch, answerLimitBytes: 1 << 20, era: 'legacy' }), await McpConnection.open({ url: `${legacy.url}?old-route=1`, fetch, answerLimitBytes: 1 << 20, era: 'legacy' })];
    expect(legacy.openSessions()).toBe(2);
    for (const open of left) {
      await t.database.query(
        `INSERT INTO app_connection_scopes (id, connection_id, node_id, url, era, session_id, lease_until) VALUES (gen_random_uuid(), $1, 'dead-node', $2, 'legacy', $3, now() - interval '1 minute')`,
        [connection.id, open.url, open.sessionId],
      );
    }
    const deleted = await t.http().delete(`/v1/connections/${connection.id}`).set('authorization', auth).expect(202);
    await waitForExecutionState(t, org.secret, (deleted.body as { executionId: string }).executionId, 'completed', 30_000);
    expect(legacy.openSessions()).toBe(0);
    const deletes = legacy.requests.filter((r) => r.method === 'DELETE').map((r) => r.sessionId);
    expect(deletes).toEqual(expect.arrayContaining(left.map((c) => c.sessionId)));
    const [rows] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM app_connections WHERE id = $1', [connection.id]);
    expect(rows!.n).toBe(0);
  });
});

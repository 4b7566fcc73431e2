import { MEMBER_ROLES, newId, ROLE_PERMISSIONS, type MemberRole, type Permission } from '@openbot/domain';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, waitForEvent, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Access, generated from the OpenAPI document so that every new route is covered the day it is
 * added: each role against each member route (the guard enforces the permission the document
 * names), and a caller of another organization against every route that takes a resource ID.
 */

interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  permission: Permission | undefined;
  security: boolean;
}

const UNKNOWN_ID = '0190c3f0-1234-7abc-8def-0123456789ab';

/** An App, an organization connection of it and a View of the owner, written as rows: the matrix only needs them to exist. */
async function appAndConnection(t: TestApp, organizationId: string, memberId: string): Promise<{ apps: string; connections: string; views: string }> {
  const apps = newId();
  const connections = newId();
  const remote = { type: 'streamable-http', url: 'http://127.0.0.1:9/mcp', headers: [], variables: {} };
  await t.database.query(`INSERT INTO apps (id, organization_id, url, name, card, remotes) VALUES ($1, $2, $3, 'matrix', false, $4)`, [apps, organizationId, remote.url, JSON.stringify([remote])]);
  await t.database.query(
    `INSERT INTO app_connections (id, organization_id, app_id, owner, remote, prepared_remote, variables, headers, state) VALUES ($1, $2, $3, 'organization', $4, $5, '{}', '{}', 'failed')`,
    [connections, organizationId, apps, remote.url, JSON.stringify(remote)],
  );
  const views = newId();
  await t.database.query(
    `INSERT INTO app_views (id, organization_id, member_id, connection_id, tool_name, uri, revision, declarations) VALUES ($1, $2, $3, $4, 'matrix', 'ui://matrix/view.html', 1, '[]')`,
    [views, organizationId, memberId, connections],
  );
  return { apps, connections, views };
}

/**
 * A pending App sign-in of that connection (`/v1/oauth/authorizations/{id}/…`), written as rows: its
 * sealed records are never opened, since another organization is refused before they are read.
 */
async function pendingAuthorization(t: TestApp, organizationId: string, memberId: string, connectionId: string): Promise<string> {
  const record = async (): Promise<string> =>
    (await t.database.query<{ id: string }>(`INSERT INTO sealed_records (id, purpose, key_id, data) VALUES (gen_random_uuid(), 'matrix', 'k1', '\\x00') RETURNING id`))[0]!.id;
  const registration = newId();
  await t.database.query(
    `INSERT INTO app_oauth_registrations (id, issuer, client_id, method, client_record_id, metadata, redirect_uri) VALUES ($1, 'https://matrix-issuer.test', 'matrix', 'pre_registered', $2, '{}', 'http://127.0.0.1/v1/oauth/matrix/callback')`,
    [registration, await record()],
  );
  const authorization = newId();
  await t.database.query(
    `INSERT INTO app_oauth_authorizations (id, registration_id, connection_id, organization_id, member_id, state_hash, verifier_record_id, resource, expires_at, request_record_id)
     VALUES ($1::uuid, $2, $3, $4, $5, decode(md5($1::text), 'hex'), $6, 'http://127.0.0.1:9/mcp', now() + interval '10 minutes', $7)`,
    [authorization, registration, connectionId, organizationId, memberId, await record(), await record()],
  );
  return authorization;
}

/** Bodies that pass validation, so the request reaches the access checks behind it. */
const BODIES: Record<string, unknown> = {
  'post /v1/chats/{id}/messages': { content: 'hello' },
  'post /v1/bots/{id}/memories': { content: 'a remembered fact' },
  'post /v1/chats/{id}/tool-outputs': { callId: 'call-1', output: 'out' },
  'post /v1/executions/{id}/decision': { decision: 'stop' },
  'post /v1/approvals/{id}/decision': { decision: 'approve' },
  'patch /v1/members/{id}': { role: 'viewer' },
  'patch /v1/bots/{id}': { name: 'Renamed' },
  'post /v1/budgets': { scope: { kind: 'organization' }, period: 'day', limitMicros: 1_000_000 },
  'post /v1/rate-limits': { scope: { kind: 'organization' }, requestsPerMinute: 1_000_000 },
  'put /v1/vaults/{id}/users': { memberIds: [] },
  'post /v1/vaults/{id}/items': { name: 'x', fields: { k: 'v' }, allowedHosts: ['x.test'] },
  'put /v1/vaults/{id}/items/{itemId}': { fields: { k: 'v' } },
  'put /v1/retention': { textDeltaDays: 7, callPayloadDays: null },
  // A member may make a connection of its own; an organization connection needs apps.manage.
  'post /v1/apps/{id}/connections': { owner: 'member' },
  'post /v1/apps/{id}/proofs': { domain: 'example.com' },
  'post /v1/views/{id}/calls': { name: 'matrix' },
  'post /v1/oauth/authorizations/{id}/loopback': { redirect: 'http://127.0.0.1:8765/callback' },
};

async function operations(t: TestApp): Promise<Operation[]> {
  const doc = (await t.http().get('/openapi.json').expect(200)).body as {
    paths: Record<string, Record<string, { 'x-openbot-permission'?: Permission; security?: unknown[] }>>;
  };
  const list: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      list.push({ method: method as Operation['method'], path, permission: operation['x-openbot-permission'], security: (operation.security ?? []).length > 0 });
    }
  }
  return list;
}

describe('access matrix', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let a: ChatFixture;
  let keys: Record<MemberRole, string>;
  const resources: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp();
    fake = await FakeOpenAiServer.start();
    fake.fallback = textReply(['ok'], [1, 1]);
    a = await createChatFixture(t, { baseUrl: fake.baseUrl });
    keys = { owner: a.secret } as Record<MemberRole, string>;
    for (const role of ['admin', 'member', 'viewer'] as const) {
      const res = await t.http().post('/v1/members').set('authorization', bearer(a.secret)).send({ role }).expect(201);
      keys[role] = (res.body as { apiKey: { secret: string } }).apiKey.secret;
      resources.member = (res.body as { member: { id: string } }).member.id;
    }
    const turn = await sendMessage(t, a.secret, a.chatId, 'hi');
    await eventsUntilEnd(t, a.secret, turn.executionId);
    // An approval of the organization: a Turn whose tool call waits for a decision.
    const gatedBot = await t
      .http()
      .post('/v1/bots')
      .set('authorization', bearer(a.secret))
      .send({ name: 'Gated', model: 'fake/gpt-test', tools: [{ name: 'ask', description: 'Asks', parameters: { type: 'object' }, approval: 'always' }] })
      .expect(201);
    const gatedChat = await t.http().post('/v1/chats').set('authorization', bearer(a.secret)).send({ botId: (gatedBot.body as { id: string }).id }).expect(201);
    fake.enqueue(toolCallReply('c1', 'ask', ['{}'], [1, 1]));
    const waiting = await sendMessage(t, a.secret, (gatedChat.body as { id: string }).id, 'ask');
    await waitForEvent(t, a.secret, waiting.executionId, 'approval.requested');
    const approval = await t.database.query<{ id: string }>('SELECT id FROM approvals WHERE execution_id = $1', [waiting.executionId]);
    const providers = await t.http().get('/v1/model-providers').set('authorization', bearer(a.secret)).expect(200);
    const key = await t.http().post('/v1/api-keys').set('authorization', bearer(a.secret)).send({ name: 'spare' }).expect(201);
    Object.assign(resources, {
      bots: a.botId,
      chats: a.chatId,
      executions: turn.executionId,
      'model-providers': (providers.body as { data: Array<{ id: string }> }).data[0]!.id,
      'api-keys': (key.body as { id: string }).id,
      members: resources.member,
      approvals: approval[0]!.id,
      budgets: (await t.http().post('/v1/budgets').set('authorization', bearer(a.secret)).send({ scope: { kind: 'organization' }, period: 'total', limitMicros: 10 ** 12 }).expect(201)).body.id,
      'rate-limits': (await t.http().post('/v1/rate-limits').set('authorization', bearer(a.secret)).send({ scope: { kind: 'organization' }, requestsPerMinute: 1_000_000 }).expect(201)).body.id,
      files: (
        (await t.http().post('/v1/files').set('authorization', bearer(a.secret)).attach('file', Buffer.from('notes'), { filename: 'notes.txt', contentType: 'text/plain' }).expect(201))
          .body as { id: string }
      ).id,
      vaults: (await t.http().post('/v1/vaults').set('authorization', bearer(a.secret)).send({ name: 'matrix' }).expect(201)).body.id,
      ...(await appAndConnection(t, a.organizationId, a.memberId)),
      // A pending reminder of A's Chat, as the remind tool saves it (test/e2e/reminders.spec.ts sets real ones).
      reminders: (
        await t.database.query<{ id: string }>(
          `INSERT INTO reminders (id, organization_id, chat_id, execution_id, call_id, message, due_at, delivery_execution_id)
           VALUES (gen_random_uuid(), $1, $2, $3, 'call_matrix', 'matrix reminder', now() + interval '1 day', $3) RETURNING id`,
          [a.organizationId, a.chatId, turn.executionId],
        )
      )[0]!.id,
      usage: ((await t.http().get('/v1/usage').set('authorization', bearer(a.secret)).expect(200)).body as { data: Array<{ id: string }> }).data[0]!.id,
    });
  });
  beforeAll(async () => {
    resources.oauth = await pendingAuthorization(t, a.organizationId, a.memberId, resources.connections!);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('[IDN-05] every member route names the permission it needs in the OpenAPI document', async () => {
    const unnamed = (await operations(t)).filter((op) => op.security && op.permission === undefined && !op.path.startsWith('/v1/organizations') && !op.path.startsWith('/v1/platform/'));
    expect(unnamed.map((op) => `${op.method} ${op.path}`)).toEqual([]);
  });

  it('[IDN-05] role matrix: each role against each member route gets 403 exactly when its role lacks the permission the route names', async () => {
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const op of (await operations(t)).filter((o) => o.permission !== undefined)) {
      const url = op.path.replace(/\{[^}]+\}/g, UNKNOWN_ID);
      for (const role of MEMBER_ROLES) {
        const req = t.http()[op.method](url).set('authorization', bearer(keys[role]));
        const res = op.method === 'get' || op.method === 'delete' ? await req : await req.send(BODIES[`${op.method} ${op.path}`] ?? {});
        const allowed = ROLE_PERMISSIONS[role].includes(op.permission!);
        const denied = res.status === 403 && (res.body as { type?: string }).type === 'Forbidden';
        outcomes.push(`${role} ${op.method} ${op.path}: ${denied ? 'denied' : 'allowed'}`);
        expected.push(`${role} ${op.method} ${op.path}: ${allowed ? 'allowed' : 'denied'}`);
        // Allowed never means a server fault.
        expect({ route: `${role} ${op.method} ${op.path}`, fault: res.status >= 500 }).toEqual({ route: `${role} ${op.method} ${op.path}`, fault: false });
      }
    }
    expect(outcomes).toEqual(expected);
    // The viewer is read-only: it may not change anything.
    expect(outcomes.filter((o) => o.startsWith('viewer') && !o.includes(' get ') && o.endsWith('allowed'))).toEqual([]);
  });

  it('[IDN-08] cross-organization matrix: another organization gets 404 on every route that takes a resource ID, and nothing changes', async () => {
    const b = await t.createOrganization('Other');
    // Platform routes take the administrator token, not an organization's key.
    const withId = (await operations(t)).filter((op) => op.security && op.path.includes('{id}') && !op.path.startsWith('/v1/platform/'));
    expect(withId.length).toBeGreaterThan(10);
    const answers: string[] = [];
    for (const op of withId) {
      const kind = op.path.split('/')[2]!;
      const id = resources[kind];
      if (id === undefined) throw new Error(`the matrix has no resource for ${op.path}: add one`);
      const req = t.http()[op.method](op.path.replace('{id}', id)).set('authorization', bearer(b.secret));
      const res = op.method === 'get' || op.method === 'delete' ? await req : await req.send(BODIES[`${op.method} ${op.path}`] ?? {});
      answers.push(`${op.method} ${op.path}: ${res.status} ${(res.body as { type?: string }).type ?? ''}`.trim());
      expect(JSON.stringify(res.body ?? {})).not.toContain(id);
    }
    expect(answers.filter((answer) => !/ 404 \w+NotFound$/.test(answer))).toEqual([]);
    // A's resources are all still there for A.
    for (const [kind, id] of Object.entries(resources)) {
      if (kind === 'member' || kind === 'members' || kind === 'api-keys' || kind === 'usage' || kind === 'reminders' || kind === 'oauth') continue;
      await t.http().get(`/v1/${kind}/${id}`).set('authorization', bearer(a.secret)).expect(200);
    }
    // Reminders have no single read: the pending one is still in its Chat's list.
    const reminders = await t.http().get(`/v1/reminders?chatId=${a.chatId}`).set('authorization', bearer(a.secret)).expect(200);
    expect((reminders.body as { data: Array<{ id: string; state: string }> }).data).toContainEqual(expect.objectContaining({ id: resources.reminders, state: 'pending' }));
    // The sign-in is still pending: unused and unbound.
    expect(await t.database.query('SELECT used_at, binding FROM app_oauth_authorizations WHERE id = $1', [resources.oauth])).toEqual([{ used_at: null, binding: null }]);
    const members = await t.http().get('/v1/members').set('authorization', bearer(a.secret)).expect(200);
    expect((members.body as { data: Array<{ id: string }> }).data.map((m) => m.id)).toContain(resources.members);
    const apiKeys = await t.http().get('/v1/api-keys').set('authorization', bearer(a.secret)).expect(200);
    expect((apiKeys.body as { data: Array<{ id: string; revokedAt: string | null }> }).data.find((k) => k.id === resources['api-keys'])?.revokedAt).toBeNull();
  });
});

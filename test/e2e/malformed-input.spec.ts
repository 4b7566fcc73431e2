import { addProvider, expectDeclaredStrict, issuePaths, UNKNOWN_ID } from '../support/api-assertions';
import { bearer } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Request input that cannot be decoded or stored — a session cookie or URL with broken
 * percent-encoding, strings holding a lone UTF-16 surrogate — is a declared 4xx naming what is
 * wrong, never a server fault, and writes no error record.
 */
describe('malformed request input', () => {
  let t: TestApp;
  let org: Awaited<ReturnType<TestApp['createOrganization']>>;

  beforeAll(async () => {
    t = await startTestApp();
    org = await t.createOrganization('Malformed');
    await addProvider(t, org.secret, 'fake');
  });
  afterAll(async () => {
    await t?.close();
  });
  // Each test counts only the error records its own requests wrote.
  beforeEach(async () => {
    await t.database.query('DELETE FROM error_records');
  });

  const faults = async (): Promise<unknown[]> => t.database.query('SELECT origin FROM error_records');

  it('[ERR-02] a session cookie with broken percent-encoding answers 401 Unauthenticated on any member route and writes no error record', async () => {
    for (const cookie of ['openbot_session=%E0', 'openbot_session=%', 'theme=dark; openbot_session=%E0%A4%A', 'openbot_session=%zz']) {
      for (const req of [
        () => t.http().get('/v1/me'),
        () => t.http().get('/v1/bots'),
        () => t.http().post('/v1/api-keys').send({ name: 'k' }),
        () => t.http().post('/v1/api-keys').set('x-csrf-token', 'x').send({ name: 'k' }),
        () => t.http().get('/v1/sso/session'),
        () => t.http().post('/v1/sso/logout').set('x-csrf-token', 'x'),
      ]) {
        const res = await req().set('cookie', cookie);
        expectDeclaredStrict(res, 401, 'Unauthenticated');
      }
    }
    expect(await faults()).toEqual([]);
  });

  it('[ERR-02] a path with broken percent-encoding is 400 InvalidInput naming the path', async () => {
    for (const path of ['/v1/bots/%E0', '/v1/executions/%E0/events', '/v1/chats/%E0%A4/tool-outputs']) {
      const method = path.endsWith('tool-outputs') ? 'post' : 'get';
      const res = await t.http()[method](path).set('authorization', bearer(org.secret));
      expectDeclaredStrict(res, 400, 'InvalidInput');
      expect(issuePaths(res)).toEqual(['path']);
    }
    expect(await faults()).toEqual([]);
  });

  it('[ERR-02] broken percent-encoding or NUL in a query parameter is 400 InvalidInput naming it', async () => {
    for (const [url, path] of [
      ['/v1/bots?after=%E0', 'after'],
      ['/v1/chats?botId=%00', 'botId'],
      ['/v1/usage?chatId=%E0%A4', 'chatId'],
      ['/v1/api-keys?limit=%00', 'limit'],
    ] as const) {
      const res = await t.http().get(url).set('authorization', bearer(org.secret));
      expectDeclaredStrict(res, 400, 'InvalidInput');
      expect({ url, paths: issuePaths(res) }).toEqual({ url, paths: [path] });
    }
    expect(await faults()).toEqual([]);
  });

  it('[ERR-02] a lone UTF-16 surrogate in a string field is 400 InvalidInput naming the field, on every route, nested fields and keys included', async () => {
    const auth = bearer(org.secret);
    const bot = { name: 'Bot', model: 'fake/gpt', instructions: 'Be brief.' };
    const cases: Array<[() => ReturnType<ReturnType<TestApp['http']>['post']>, string]> = [
      [() => t.http().post('/v1/api-keys').set('authorization', auth).send({ name: 'a\ud800b' }), 'name'],
      [() => t.http().post('/v1/api-keys').set('authorization', auth).send({ name: 'trailing \udfff' }), 'name'],
      [() => t.http().post('/v1/bots').set('authorization', auth).send({ ...bot, name: 'a\ud800b' }), 'name'],
      [() => t.http().post('/v1/bots').set('authorization', auth).send({ ...bot, instructions: '\udc00 first' }), 'instructions'],
      [() => t.http().post('/v1/bots').set('authorization', auth).send({ ...bot, tools: [{ name: 'pick', description: 'x\ud83d' }] }), 'tools.0.description'],
      [
        () => t.http().post('/v1/bots').set('authorization', auth).send({ ...bot, tools: [{ name: 'pick', parameters: { type: 'object', properties: { 'k\ud800': { type: 'string' } } } }] }),
        'tools.0.parameters.properties.k\ud800',
      ],
      [() => t.http().post('/v1/organizations').set('authorization', `Bearer ${t.adminToken}`).send({ name: 'Org \ud800' }), 'name'],
      [() => t.http().post('/v1/members').set('authorization', auth).send({ role: 'member', name: '\udbff' }), 'name'],
    ];
    for (const [send, path] of cases) {
      const res = await send();
      expectDeclaredStrict(res, 400, 'InvalidInput');
      expect({ path, paths: issuePaths(res) }).toEqual({ path, paths: [path] });
    }
    // Nothing was stored: no bot, no key, no organization took a U+FFFD in place of the surrogate.
    expect(await t.database.query(`SELECT name FROM bots WHERE name LIKE '%' || chr(65533) || '%' OR instructions LIKE '%' || chr(65533) || '%'`)).toEqual([]);
    expect(await t.database.query(`SELECT name FROM api_keys WHERE name LIKE '%' || chr(65533) || '%'`)).toEqual([]);
    expect(await t.database.query(`SELECT name FROM organizations WHERE name LIKE '%' || chr(65533) || '%'`)).toEqual([]);
    expect(await faults()).toEqual([]);
  });

  /** Every documented operation with a path parameter, read from the served OpenAPI document. */
  async function pathOperations(): Promise<Array<{ method: 'get' | 'post' | 'put' | 'patch' | 'delete'; template: string; params: string[]; ids: string[] }>> {
    const doc = (await t.http().get('/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string; schema?: { format?: string } }> }>>;
    };
    const operations: Array<{ method: 'get' | 'post' | 'put' | 'patch' | 'delete'; template: string; params: string[]; ids: string[] }> = [];
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const path = (operation.parameters ?? []).filter((p) => p.in === 'path');
        const ids = path.filter((p) => p.schema?.format === 'uuid').map((p) => p.name);
        if (path.length > 0) operations.push({ method: method as 'get', template, params: path.map((p) => p.name), ids });
      }
    }
    return operations;
  }

  function request(method: 'get' | 'post' | 'put' | 'patch' | 'delete', template: string, values: Record<string, string>) {
    const url = template.replace(/\{(\w+)\}/g, (_all, name: string) => values[name] ?? UNKNOWN_ID);
    const auth = template.startsWith('/v1/platform/') ? `Bearer ${t.adminToken}` : bearer(org.secret);
    const req = t.http()[method](url).set('authorization', auth);
    return method === 'get' || method === 'delete' ? req : req.send({});
  }

  it('[ERR-02] fuzzing every documented route: a NUL byte in any path parameter is 400 InvalidInput naming it, and a malformed ID is never a fault', async () => {
    const operations = await pathOperations();
    // The walk covers the whole API, the memory routes among them.
    expect(operations.length).toBeGreaterThanOrEqual(80);
    expect(operations.map((o) => `${o.method} ${o.template}`)).toEqual(
      expect.arrayContaining(['get /v1/bots/{id}/memories', 'get /v1/bots/{id}/memories/{memoryId}', 'delete /v1/bots/{id}/memories/{memoryId}']),
    );
    // Every resource ID in a path is declared a UUID; only the price's model and an App tool's name are free text.
    expect([...new Set(operations.flatMap((o) => o.params.filter((p) => !o.ids.includes(p))))].sort()).toEqual(['model', 'name']);
    const answers: Array<{ route: string; param: string; value: string; status: number; type: unknown; paths: string[] }> = [];
    for (const { method, template, params } of operations) {
      for (const param of params) {
        for (const value of ['%00', `${UNKNOWN_ID.slice(0, 8)}%00${UNKNOWN_ID.slice(8)}`, 'not-a-uuid', '%20', '1']) {
          const res = await request(method, template, { [param]: value });
          answers.push({ route: `${method} ${template}`, param, value, status: res.status, type: (res.body as { type?: unknown }).type, paths: issuePaths(res) });
        }
      }
    }
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    const withNul = answers.filter((a) => a.value.includes('%00'));
    expect(withNul.filter((a) => a.status !== 400 || a.type !== 'InvalidInput' || !a.paths.includes(a.param))).toEqual([]);
    expect(await faults()).toEqual([]);
  });

  it('[ERR-02] a NUL byte in a path ID of the memory routes is 400 InvalidInput naming the parameter; a malformed one is 404 as before', async () => {
    const auth = bearer(org.secret);
    const bot = (await t.http().post('/v1/bots').set('authorization', auth).send({ name: 'Memo', model: 'fake/gpt' }).expect(201)).body as { id: string };
    for (const [res, param] of [
      [await t.http().get('/v1/bots/%00/memories').set('authorization', auth), 'id'],
      [await t.http().get(`/v1/bots/${bot.id}/memories/%00`).set('authorization', auth), 'memoryId'],
      [await t.http().delete(`/v1/bots/${bot.id}/memories/a%00b`).set('authorization', auth), 'memoryId'],
    ] as const) {
      expectDeclaredStrict(res, 400, 'InvalidInput');
      expect(issuePaths(res)).toContain(param);
    }
    expectDeclaredStrict(await t.http().get(`/v1/bots/${bot.id}/memories/not-a-uuid`).set('authorization', auth), 404, 'MemoryNotFound');
    expectDeclaredStrict(await t.http().get('/v1/bots/not-a-uuid/memories').set('authorization', auth), 404, 'BotNotFound');
    expect(await faults()).toEqual([]);
  });

  it('[ERR-02] a surrogate pair (an emoji) is valid text and is stored as sent', async () => {
    const res = await t.http().post('/v1/api-keys').set('authorization', bearer(org.secret)).send({ name: 'rocket \ud83d\ude80' });
    expect(res.status).toBe(201);
    expect((res.body as { name: string }).name).toBe('rocket 🚀');
    const [row] = await t.database.query<{ name: string }>('SELECT name FROM api_keys WHERE id = $1', [(res.body as { id: string }).id]);
    expect(row!.name).toBe('rocket 🚀');
  });
});

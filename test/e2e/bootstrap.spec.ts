import { ROLE_PERMISSIONS } from '@openbot/domain';
import { expectDeclaredNoErrorId, issuePaths, UUID_V7 } from '../support/api-assertions';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Platform bootstrap (docs/http-api.md "Authentication", "Errors"): the admin token creates an
 * organization with its owner and first API key; the key works at once and is stored as a hash only.
 */

interface CreatedOrganization {
  organization: { id: string; name: string };
  member: { id: string; role: string };
  apiKey: { id: string; secret: string };
}

describe('bootstrap: organizations and the owner key', () => {
  let t: TestApp;
  const admin = (): string => `Bearer ${t.adminToken}`;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('POST /v1/organizations with the admin token answers 201 with exactly the organization, its owner and a key', async () => {
    const res = await t.http().post('/v1/organizations').set('authorization', admin()).send({ name: 'Acme' }).expect(201);
    const body = res.body as CreatedOrganization;
    expect(body).toEqual({
      organization: { id: expect.stringMatching(UUID_V7), name: 'Acme' },
      member: { id: expect.stringMatching(UUID_V7), role: 'owner' },
      apiKey: { id: expect.stringMatching(UUID_V7), secret: expect.any(String) },
    });
    expect(Object.keys(body).sort()).toEqual(['apiKey', 'member', 'organization']);
    expect(Object.keys(body.organization).sort()).toEqual(['id', 'name']);
    expect(Object.keys(body.member).sort()).toEqual(['id', 'role']);
    expect(Object.keys(body.apiKey).sort()).toEqual(['id', 'secret']);
    expect(new Set([body.organization.id, body.member.id, body.apiKey.id]).size).toBe(3);
    expect(body.apiKey.secret.length).toBeGreaterThanOrEqual(32);
  });

  it('the new secret authenticates GET /v1/me, which names the organization, the owner and the key', async () => {
    const created = (await t.http().post('/v1/organizations').set('authorization', admin()).send({ name: 'Me Corp' }).expect(201))
      .body as CreatedOrganization;
    const me = await t.http().get('/v1/me').set('authorization', `Bearer ${created.apiKey.secret}`).expect(200);
    expect(me.body).toEqual({
      organization: { id: created.organization.id, name: 'Me Corp' },
      member: { id: created.member.id, role: 'owner', permissions: [...ROLE_PERMISSIONS.owner] },
      apiKey: { id: created.apiKey.id, name: expect.any(String) },
    });
    const keyName = (me.body as { apiKey: { name: string } }).apiKey.name;
    expect(keyName.trim()).not.toBe('');
    // The same key as the organization's key list shows it.
    const list = await t.http().get('/v1/api-keys').set('authorization', `Bearer ${created.apiKey.secret}`).expect(200);
    expect((list.body as { data: Array<{ id: string; name: string }> }).data).toEqual([
      expect.objectContaining({ id: created.apiKey.id, name: keyName, memberId: created.member.id }),
    ]);
  });

  it('the secret is not stored in clear: only a 32-byte hash, and no table holds the secret text', async () => {
    const created = (await t.http().post('/v1/organizations').set('authorization', admin()).send({ name: 'Hashing' }).expect(201))
      .body as CreatedOrganization;
    const { secret } = created.apiKey;
    const [row] = await t.database.query<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = $1', [created.apiKey.id]);
    expect(row).toBeDefined();
    const hash = row!.secret_hash as Buffer;
    expect(Buffer.isBuffer(hash)).toBe(true);
    expect(hash.length).toBe(32);
    const secretBytes = Buffer.from(secret, 'utf8');
    // The random part of the secret is what proves possession: it must appear nowhere.
    const randomPart = secret.slice(-20);
    for (const [column, value] of Object.entries(row!)) {
      const text = Buffer.isBuffer(value) ? value.toString('latin1') : value instanceof Date ? value.toISOString() : String(value);
      expect({ column, containsSecret: text.includes(secret) || text.includes(randomPart) }).toEqual({ column, containsSecret: false });
      if (Buffer.isBuffer(value)) expect({ column, containsSecret: value.includes(secretBytes) }).toEqual({ column, containsSecret: false });
    }
    // Nowhere in the whole database either (bytea shows as hex in JSON, so check that form too).
    const tables = await t.database.query<{ table_schema: string; table_name: string }>(
      `SELECT table_schema, table_name FROM information_schema.tables
        WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'`,
    );
    expect(tables.map((r) => r.table_name)).toContain('api_keys');
    const secretHex = secretBytes.toString('hex');
    for (const { table_schema, table_name } of tables) {
      const table = `${table_schema}.${table_name}`;
      const rows = await t.database.query<{ j: string }>(`SELECT row_to_json(t)::text AS j FROM "${table_schema}"."${table_name}" t`);
      for (const { j } of rows) {
        expect({ table, leaked: j.includes(randomPart) || j.includes(secretHex) }).toEqual({ table, leaked: false });
      }
    }
  });

  it('a name of exactly 200 characters is accepted and kept', async () => {
    const name = 'n'.repeat(200);
    const res = await t.http().post('/v1/organizations').set('authorization', admin()).send({ name }).expect(201);
    expect((res.body as CreatedOrganization).organization.name).toBe(name);
  });

  describe('[ERR-02] name validation answers 400 InvalidInput naming the field', () => {
    const cases: Array<[string, unknown, string]> = [
      ['missing', {}, 'name'],
      ['empty', { name: '' }, 'name'],
      ['blank', { name: '   \t ' }, 'name'],
      ['longer than 200 characters', { name: 'x'.repeat(201) }, 'name'],
      ['a number', { name: 42 }, 'name'],
      ['null', { name: null }, 'name'],
      ['an object', { name: { first: 'Acme' } }, 'name'],
      ['an array', { name: ['Acme'] }, 'name'],
      ['accompanied by an unknown field', { name: 'Acme', plan: 'gold' }, 'plan'],
    ];
    it.each(cases)('name %s', async (_label, body, path) => {
      const before = await t.database.query<{ n: string }>('SELECT count(*)::text AS n FROM organizations');
      const res = await t.http().post('/v1/organizations').set('authorization', admin()).send(body as object);
      expectDeclaredNoErrorId(res, 400, 'InvalidInput');
      expect(issuePaths(res)).toContain(path);
      for (const issue of (res.body as { issues: Array<{ path: unknown; message: unknown }> }).issues) {
        expect(Object.keys(issue).sort()).toEqual(['message', 'path']);
        expect(typeof issue.message).toBe('string');
      }
      const after = await t.database.query<{ n: string }>('SELECT count(*)::text AS n FROM organizations');
      expect(after).toEqual(before);
    });
  });

  describe('[ERR-02] authentication: declared 401 Unauthenticated', () => {
    it('no Authorization header is 401 on platform and member routes', async () => {
      expectDeclaredNoErrorId(await t.http().post('/v1/organizations').send({ name: 'Acme' }), 401, 'Unauthenticated');
      expectDeclaredNoErrorId(await t.http().get('/v1/organizations'), 401, 'Unauthenticated');
      expectDeclaredNoErrorId(await t.http().get('/v1/me'), 401, 'Unauthenticated');
      expectDeclaredNoErrorId(await t.http().get('/v1/api-keys'), 401, 'Unauthenticated');
    });

    it('a wrong, garbage or malformed bearer is 401 and creates nothing', async () => {
      const { secret } = await t.createOrganization('Real');
      const before = await t.database.query<{ n: string }>('SELECT count(*)::text AS n FROM organizations');
      const last = secret.slice(-1);
      const forged = `${secret.slice(0, -1)}${last === 'A' ? 'B' : 'A'}`;
      const headers = [
        'Bearer garbage',
        `Bearer ${forged}`,
        `Bearer ${t.adminToken}x`,
        `Bearer ${t.adminToken.slice(0, -1)}`,
        `Bearer obk_${'0'.repeat(32)}_${'A'.repeat(43)}`,
        'Bearer ',
        'Bearer',
        `Basic ${Buffer.from(`admin:${t.adminToken}`).toString('base64')}`,
        t.adminToken,
        `Bearer ${'x'.repeat(10_000)}`,
      ];
      for (const header of headers) {
        const res = await t.http().post('/v1/organizations').set('authorization', header).send({ name: 'Nope' });
        expectDeclaredNoErrorId(res, 401, 'Unauthenticated');
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
        expectDeclaredNoErrorId(await t.http().get('/v1/me').set('authorization', header), 401, 'Unauthenticated');
      }
      const after = await t.database.query<{ n: string }>('SELECT count(*)::text AS n FROM organizations');
      expect(after).toEqual(before);
    });

    it('a wrong secret answers exactly like an unknown one (nothing to learn about which part was wrong)', async () => {
      const { secret } = await t.createOrganization('Oracle');
      const forged = `${secret.slice(0, -2)}${secret.endsWith('AA') ? 'BB' : 'AA'}`;
      const wrong = await t.http().get('/v1/me').set('authorization', `Bearer ${forged}`);
      const unknown = await t.http().get('/v1/me').set('authorization', 'Bearer obk_nothing');
      expect([wrong.status, wrong.body]).toEqual([unknown.status, unknown.body]);
    });
  });

  describe('[ERR-02] access levels: declared 403 Forbidden', () => {
    it('an organization API key on a platform route is 403', async () => {
      const { secret } = await t.createOrganization('Tenant');
      const before = await t.database.query<{ n: string }>('SELECT count(*)::text AS n FROM organizations');
      expectDeclaredNoErrorId(
        await t.http().post('/v1/organizations').set('authorization', `Bearer ${secret}`).send({ name: 'Escalation' }),
        403,
        'Forbidden',
      );
      expectDeclaredNoErrorId(await t.http().get('/v1/organizations').set('authorization', `Bearer ${secret}`), 403, 'Forbidden');
      const after = await t.database.query<{ n: string }>('SELECT count(*)::text AS n FROM organizations');
      expect(after).toEqual(before);
    });

    it('the admin token on a member route is 403', async () => {
      expectDeclaredNoErrorId(await t.http().get('/v1/me').set('authorization', admin()), 403, 'Forbidden');
      expectDeclaredNoErrorId(await t.http().get('/v1/api-keys').set('authorization', admin()), 403, 'Forbidden');
      expectDeclaredNoErrorId(await t.http().post('/v1/api-keys').set('authorization', admin()).send({ name: 'k' }), 403, 'Forbidden');
      expectDeclaredNoErrorId(
        await t.http().delete('/v1/api-keys/00000000-0000-7000-8000-000000000000').set('authorization', admin()),
        403,
        'Forbidden',
      );
    });
  });
});

describe('GET /v1/organizations (platform administrator) paginates oldest first', () => {
  let t: TestApp;
  const admin = (): string => `Bearer ${t.adminToken}`;
  let created: string[];

  beforeAll(async () => {
    t = await startTestApp();
    created = [];
    for (const name of ['First', 'Second', 'Third']) created.push((await t.createOrganization(name)).organizationId);
  });
  afterAll(async () => {
    await t.close();
  });

  it('limit=2 gives two items and a cursor; after=cursor gives the rest and next null', async () => {
    const first = await t.http().get('/v1/organizations?limit=2').set('authorization', admin()).expect(200);
    const page1 = first.body as { data: Array<{ id: string; name: string; createdAt: string }>; next: string | null };
    expect(Object.keys(page1).sort()).toEqual(['data', 'next']);
    expect(page1.data.map((o) => [o.id, o.name])).toEqual([
      [created[0], 'First'],
      [created[1], 'Second'],
    ]);
    for (const o of page1.data) {
      expect(Object.keys(o).sort()).toEqual(['createdAt', 'id', 'name']);
      expect(new Date(o.createdAt).toISOString()).toBe(o.createdAt);
    }
    expect(page1.next).toEqual(expect.any(String));

    const second = await t.http().get('/v1/organizations').query({ after: page1.next, limit: 2 }).set('authorization', admin()).expect(200);
    const page2 = second.body as { data: Array<{ id: string; name: string }>; next: string | null };
    expect(page2.data.map((o) => [o.id, o.name])).toEqual([[created[2], 'Third']]);
    expect(page2.next).toBeNull();
  });

  it('without parameters every organization comes back on one page, oldest first', async () => {
    const res = await t.http().get('/v1/organizations').set('authorization', admin()).expect(200);
    expect((res.body as { data: Array<{ id: string }> }).data.map((o) => o.id)).toEqual(created);
    expect((res.body as { next: unknown }).next).toBeNull();
  });

  it('a page that ends exactly at the last row says next null or leads to an empty page', async () => {
    const res = await t.http().get('/v1/organizations?limit=3').set('authorization', admin()).expect(200);
    const page = res.body as { data: Array<{ id: string }>; next: string | null };
    expect(page.data.map((o) => o.id)).toEqual(created);
    if (page.next !== null) {
      const rest = await t.http().get('/v1/organizations').query({ after: page.next }).set('authorization', admin()).expect(200);
      expect(rest.body).toEqual({ data: [], next: null });
    }
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['after=garbage', 'after'],
    ['after=1', 'after'],
    ['after=0190c3f0-0000-7000-8000-00000000000g', 'after'],
    ['after=x&after=y', 'after'],
  ])('[ERR-02] %s answers 400 InvalidInput with issues path %s', async (query, path) => {
    const res = await t.http().get(`/v1/organizations?${query}`).set('authorization', admin());
    expectDeclaredNoErrorId(res, 400, 'InvalidInput');
    expect(issuePaths(res)).toContain(path);
  });

  it('limit=200 (the maximum) and limit=1 are accepted', async () => {
    await t.http().get('/v1/organizations?limit=200').set('authorization', admin()).expect(200);
    const one = await t.http().get('/v1/organizations?limit=1').set('authorization', admin()).expect(200);
    expect((one.body as { data: unknown[]; next: unknown }).data).toHaveLength(1);
    const next = (one.body as { next: string | null }).next;
    expect(next).toEqual(expect.any(String));
    const rest = await t.http().get('/v1/organizations').query({ after: next, limit: 1 }).set('authorization', admin()).expect(200);
    expect((rest.body as { data: Array<{ id: string }> }).data.map((o) => o.id)).toEqual([created[1]]);
  });
});

import type { SealedRecordId } from '@openbot/domain';
import { Client } from 'pg';
import { SealedRecords } from '@openbot/platform';
import { expectDeclared, issuePaths, UUID_V7 } from '../support/api-assertions';
import { bearer } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Model providers of an organization (`/v1/model-providers`): created with an API key that is
 * stored sealed and never returned, listed, read and deleted, unique by name per organization,
 * invisible to other organizations, and refused when the base URL fails the egress policy.
 * The test app allows 127.0.0.1 (OPENBOT_EGRESS_ALLOW), as a local model server needs.
 */

const PROVIDER_FIELDS = ['baseUrl', 'id', 'kind', 'name'];

interface ProviderBody {
  id: string;
  name: string;
  kind: string;
  baseUrl: string;
}
interface Page {
  data: ProviderBody[];
  next: string | null;
}

describe('model providers', () => {
  let t: TestApp;
  let owner: Awaited<ReturnType<TestApp['createOrganization']>>;
  let counter = 0;
  const uniqueName = (prefix: string): string => `${prefix}-${++counter}`;

  async function create(secret: string, body: Record<string, unknown>): Promise<ProviderBody> {
    const res = await t.http().post('/v1/model-providers').set('authorization', bearer(secret)).send(body);
    expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 201, body: expect.anything() });
    return res.body as ProviderBody;
  }

  async function listAll(secret: string): Promise<ProviderBody[]> {
    const res = await t.http().get('/v1/model-providers?limit=200').set('authorization', bearer(secret)).expect(200);
    return (res.body as Page).data;
  }

  async function countRows(table: 'model_providers' | 'sealed_records'): Promise<number> {
    const [row] = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
    return row!.n;
  }

  /** Every row of every table of the database, as text, that contains `needle`. */
  async function tablesContaining(needle: string): Promise<string[]> {
    const tables = await t.database.query<{ schema: string; name: string }>(
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    expect(tables.map((r) => r.name)).toEqual(expect.arrayContaining(['model_providers', 'sealed_records']));
    const hits: string[] = [];
    for (const { schema, name } of tables) {
      const [row] = await t.database.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${schema}"."${name}" r WHERE strpos(r::text, $1) > 0 OR strpos(r::text, $2) > 0`,
        [needle, Buffer.from(needle, 'utf8').toString('hex')],
      );
      if (row!.n > 0) hits.push(`${schema}.${name}`);
    }
    return hits;
  }

  beforeAll(async () => {
    t = await startTestApp();
    owner = await t.createOrganization('Models Inc');
  });
  afterAll(async () => {
    await t.close();
  });

  it('POST /v1/model-providers answers 201 with { id, name, kind, baseUrl } and GET reads it back', async () => {
    const res = await t
      .http()
      .post('/v1/model-providers')
      .set('authorization', bearer(owner.secret))
      .send({ name: 'local', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9999/v1', apiKey: 'sk-local-test-key-0001' })
      .expect(201);
    expect(res.body).toEqual({ id: expect.stringMatching(UUID_V7), name: 'local', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9999/v1' });
    const provider = res.body as ProviderBody;
    const read = await t.http().get(`/v1/model-providers/${provider.id}`).set('authorization', bearer(owner.secret)).expect(200);
    expect(read.body).toEqual(provider);
    expect((await listAll(owner.secret)).map((p) => p.id)).toContain(provider.id);
  });

  it('[SEC-01] the API key is stored only sealed: no column of any table holds its text, and it is never returned', async () => {
    const apiKey = `sk-sealed-${'x'.repeat(8)}-${Date.now()}`;
    const sealedBefore = await countRows('sealed_records');
    const created = await t
      .http()
      .post('/v1/model-providers')
      .set('authorization', bearer(owner.secret))
      .send({ name: 'sealed', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9999/v1', apiKey })
      .expect(201);
    const provider = created.body as ProviderBody;
    expect(Object.keys(provider).sort()).toEqual(PROVIDER_FIELDS);
    const answers = [
      created,
      await t.http().get(`/v1/model-providers/${provider.id}`).set('authorization', bearer(owner.secret)).expect(200),
      await t.http().get('/v1/model-providers').set('authorization', bearer(owner.secret)).expect(200),
    ];
    for (const answer of answers) {
      expect(answer.text).not.toContain(apiKey);
      expect(answer.text.toLowerCase()).not.toContain('apikey');
    }
    expect(await tablesContaining(apiKey)).toEqual([]);
    // The scan does find what is stored in the clear (a check that it looks at the rows at all).
    expect(await tablesContaining(provider.id)).toContain('public.model_providers');
    // One new sealed record, with the provider's purpose, that the app's own SealedRecords opens to the key.
    expect(await countRows('sealed_records')).toBe(sealedBefore + 1);
    const [row] = await t.database.query<{ recordId: string; purpose: string }>(
      `SELECT p.api_key_record_id AS "recordId", s.purpose FROM model_providers p JOIN sealed_records s ON s.id = p.api_key_record_id WHERE p.id = $1`,
      [provider.id],
    );
    expect(row?.purpose).toBe('model-provider.api-key');
    expect(await t.app.get(SealedRecords).get(row!.recordId as SealedRecordId)).toEqual({ purpose: 'model-provider.api-key', value: apiKey });
  });

  it('the API key is optional: without one no sealed record is written', async () => {
    const sealedBefore = await countRows('sealed_records');
    const provider = await create(owner.secret, { name: uniqueName('keyless'), kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:8080/v1' });
    expect(await countRows('sealed_records')).toBe(sealedBefore);
    const [row] = await t.database.query<{ recordId: string | null }>('SELECT api_key_record_id AS "recordId" FROM model_providers WHERE id = $1', [provider.id]);
    expect(row).toEqual({ recordId: null });
  });

  it('the name is trimmed; kind anthropic is accepted (stored, not callable yet)', async () => {
    const provider = await create(owner.secret, { name: '  spaced  ', kind: 'anthropic', baseUrl: 'http://127.0.0.1:9998' });
    expect(provider).toEqual({ id: expect.any(String), name: 'spaced', kind: 'anthropic', baseUrl: 'http://127.0.0.1:9998' });
  });

  it('a duplicate name in the organization answers 409 ModelProviderNameTaken and writes nothing, sealed key included', async () => {
    const name = uniqueName('dup');
    await create(owner.secret, { name, kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9999/v1', apiKey: 'sk-first' });
    const providersBefore = await countRows('model_providers');
    const sealedBefore = await countRows('sealed_records');
    for (const candidate of [name, `  ${name} `]) {
      const res = await t
        .http()
        .post('/v1/model-providers')
        .set('authorization', bearer(owner.secret))
        .send({ name: candidate, kind: 'anthropic', baseUrl: 'http://127.0.0.1:1/', apiKey: 'sk-second' });
      expectDeclared(res, 409, 'ModelProviderNameTaken');
    }
    expect(await countRows('model_providers')).toBe(providersBefore);
    expect(await countRows('sealed_records')).toBe(sealedBefore);
  });

  it('concurrent creates of one name: exactly one 201, the others 409', async () => {
    const name = uniqueName('race');
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        t.http().post('/v1/model-providers').set('authorization', bearer(owner.secret)).send({ name, kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9999/v1', apiKey: 'k' }),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    const [row] = await t.database.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM model_providers WHERE organization_id = $1 AND name = $2`,
      [owner.organizationId, name],
    );
    expect(row!.n).toBe(1);
  });

  it.each([
    ['no name', { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/' }, 'name'],
    ['an empty name', { name: '', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/' }, 'name'],
    ['a blank name', { name: '   ', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/' }, 'name'],
    ['a name with a slash', { name: 'a/b', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/' }, 'name'],
    ['a name too long', { name: 'n'.repeat(101), kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/' }, 'name'],
    ['a number as name', { name: 7, kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/' }, 'name'],
    ['no kind', { name: 'k', baseUrl: 'http://127.0.0.1:1/' }, 'kind'],
    ['an unknown kind', { name: 'k', kind: 'openai', baseUrl: 'http://127.0.0.1:1/' }, 'kind'],
    ['no baseUrl', { name: 'k', kind: 'openai-compatible' }, 'baseUrl'],
    ['a baseUrl that is no URL', { name: 'k', kind: 'openai-compatible', baseUrl: 'not a url' }, 'baseUrl'],
    ['a relative baseUrl', { name: 'k', kind: 'openai-compatible', baseUrl: '/v1' }, 'baseUrl'],
    ['an ftp baseUrl', { name: 'k', kind: 'openai-compatible', baseUrl: 'ftp://127.0.0.1/' }, 'baseUrl'],
    ['a baseUrl with credentials', { name: 'k', kind: 'openai-compatible', baseUrl: 'http://user:pass@127.0.0.1:1/' }, 'baseUrl'],
    ['a number as baseUrl', { name: 'k', kind: 'openai-compatible', baseUrl: 8080 }, 'baseUrl'],
    ['an empty apiKey', { name: 'k', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/', apiKey: '' }, 'apiKey'],
    ['an object as apiKey', { name: 'k', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/', apiKey: { k: 1 } }, 'apiKey'],
    ['an unknown field', { name: 'k', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/', organizationId: 'x' }, 'organizationId'],
  ])('[ERR-02] %s answers 400 InvalidInput naming the field, and writes nothing', async (_label, body, path) => {
    const before = await countRows('model_providers');
    const res = await t.http().post('/v1/model-providers').set('authorization', bearer(owner.secret)).send(body);
    expectDeclared(res, 400, 'InvalidInput');
    expect(issuePaths(res)).toContain(path);
    expect(await countRows('model_providers')).toBe(before);
  });

  describe('egress policy on baseUrl', () => {
    it.each([
      ['a private address', 'http://10.0.0.5/v1'],
      ['the cloud metadata address', 'http://169.254.169.254/'],
      ['a link-local address', 'http://169.254.10.1/v1'],
      ['another loopback address than the allowed one', 'http://127.0.0.2:9999/v1'],
      ['the IPv6 loopback', 'http://[::1]:9999/v1'],
      ['the unspecified address', 'http://0.0.0.0:9999/v1'],
      ['a private address in hex shorthand', 'http://0xa.0.0.5/'],
      ['a private IPv6 address', 'http://[fd12::1]/'],
    ])('%s is refused with 400 on path baseUrl, and nothing is written', async (_label, baseUrl) => {
      const providersBefore = await countRows('model_providers');
      const sealedBefore = await countRows('sealed_records');
      const res = await t.http().post('/v1/model-providers').set('authorization', bearer(owner.secret)).send({ name: uniqueName('egress'), kind: 'openai-compatible', baseUrl, apiKey: 'sk-x' });
      expectDeclared(res, 400, 'InvalidInput');
      expect(issuePaths(res)).toEqual(['baseUrl']);
      expect(await countRows('model_providers')).toBe(providersBefore);
      expect(await countRows('sealed_records')).toBe(sealedBefore);
    });

    it('127.0.0.1 is allowed because the test app lists it in OPENBOT_EGRESS_ALLOW', async () => {
      const provider = await create(owner.secret, { name: uniqueName('loopback'), kind: 'openai-compatible', baseUrl: 'https://127.0.0.1:9443/v1' });
      expect(provider.baseUrl).toBe('https://127.0.0.1:9443/v1');
    });
  });

  it('the list is oldest first and paginates with after/limit', async () => {
    const org = await t.createOrganization('Paging Models');
    const names = ['p1', 'p2', 'p3', 'p4', 'p5'];
    for (const name of names) await create(org.secret, { name, kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9999/v1' });
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const query: Record<string, string | number> = { limit: 2 };
      if (after !== null) query.after = after;
      const page = (await t.http().get('/v1/model-providers').query(query).set('authorization', bearer(org.secret)).expect(200)).body as Page;
      expect(Object.keys(page).sort()).toEqual(['data', 'next']);
      expect(page.data.length).toBeLessThanOrEqual(2);
      for (const item of page.data) expect(Object.keys(item).sort()).toEqual(PROVIDER_FIELDS);
      seen.push(...page.data.map((p) => p.name));
      after = page.next;
      pages += 1;
    } while (after !== null && pages < 10);
    expect(seen).toEqual(names);
    expect(pages).toBe(3);
    for (const [query, path] of [
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['after=garbage', 'after'],
    ]) {
      const res = await t.http().get(`/v1/model-providers?${query}`).set('authorization', bearer(org.secret));
      expectDeclared(res, 400, 'InvalidInput');
      expect(issuePaths(res)).toEqual([path]);
    }
  });

  it('DELETE answers 200 with the deleted provider, removes its sealed key, and frees the name', async () => {
    const name = uniqueName('deleted');
    const provider = await create(owner.secret, { name, kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9999/v1', apiKey: 'sk-delete-me' });
    const [before] = await t.database.query<{ recordId: string }>('SELECT api_key_record_id AS "recordId" FROM model_providers WHERE id = $1', [provider.id]);
    const res = await t.http().delete(`/v1/model-providers/${provider.id}`).set('authorization', bearer(owner.secret)).expect(200);
    expect(res.body).toEqual(provider);
    expect(await t.database.query('SELECT 1 FROM sealed_records WHERE id = $1', [before!.recordId])).toEqual([]);
    expectDeclared(await t.http().get(`/v1/model-providers/${provider.id}`).set('authorization', bearer(owner.secret)), 404, 'ModelProviderNotFound');
    expectDeclared(await t.http().delete(`/v1/model-providers/${provider.id}`).set('authorization', bearer(owner.secret)), 404, 'ModelProviderNotFound');
    expect((await listAll(owner.secret)).map((p) => p.id)).not.toContain(provider.id);
    await create(owner.secret, { name, kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9999/v1' });
  });

  it.each([['malformed', 'not-a-uuid'], ['unknown', '0190c3f0-1234-7abc-8def-0123456789ab']])(
    'a %s id answers 404 ModelProviderNotFound on GET and DELETE',
    async (_label, id) => {
      expectDeclared(await t.http().get(`/v1/model-providers/${id}`).set('authorization', bearer(owner.secret)), 404, 'ModelProviderNotFound');
      expectDeclared(await t.http().delete(`/v1/model-providers/${id}`).set('authorization', bearer(owner.secret)), 404, 'ModelProviderNotFound');
    },
  );

  describe('a provider that Bots use', () => {
    async function addBot(secret: string, name: string, model: string): Promise<{ id: string; name: string }> {
      const res = await t.http().post('/v1/bots').set('authorization', bearer(secret)).send({ name, model });
      expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 201, body: expect.anything() });
      return res.body as { id: string; name: string };
    }

    it('[ERR-02] DELETE is 409 ModelProviderInUse naming every Bot whose model names it, deletes nothing, and succeeds once they moved away', async () => {
      const org = await t.createOrganization('Providers In Use');
      const used = await create(org.secret, { name: 'used', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9999/v1', apiKey: 'sk-used' });
      await create(org.secret, { name: 'other', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9999/v1' });
      const first = await addBot(org.secret, 'First', 'used/gpt-a');
      const second = await addBot(org.secret, 'Second', 'used/gpt-b/with-slash');
      await addBot(org.secret, 'Elsewhere', 'other/gpt-a');
      // Another organization's Bot naming a provider of the same name never counts (IDN-08).
      const foreign = await t.createOrganization('Providers Elsewhere');
      await create(foreign.secret, { name: 'used', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9999/v1' });
      await addBot(foreign.secret, 'Foreign', 'used/gpt-a');

      const refused = await t.http().delete(`/v1/model-providers/${used.id}`).set('authorization', bearer(org.secret));
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({
        type: 'ModelProviderInUse',
        message: expect.stringContaining('"used" is used by 2 Bots'),
        bots: [first, second].map(({ id, name }) => ({ id, name })).sort((a, b) => a.id.localeCompare(b.id)),
        botCount: 2,
      });
      expect(refused.headers['openbot-error-id']).toBeUndefined();
      await t.http().get(`/v1/model-providers/${used.id}`).set('authorization', bearer(org.secret)).expect(200);
      const [key] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM model_providers p JOIN sealed_records s ON s.id = p.api_key_record_id WHERE p.id = $1', [used.id]);
      expect(key!.n).toBe(1);

      await t.http().patch(`/v1/bots/${first.id}`).set('authorization', bearer(org.secret)).send({ model: 'other/gpt-a' }).expect(200);
      const stillUsed = await t.http().delete(`/v1/model-providers/${used.id}`).set('authorization', bearer(org.secret));
      expect(stillUsed.status).toBe(409);
      expect(stillUsed.body).toMatchObject({ bots: [{ id: second.id, name: 'Second' }], botCount: 1 });
      await t.http().delete(`/v1/bots/${second.id}`).set('authorization', bearer(org.secret)).expect(200);
      await t.http().delete(`/v1/model-providers/${used.id}`).set('authorization', bearer(org.secret)).expect(200);
    });

    it('a Bot create or model change that runs beside the delete waits for it and is refused with 400 on model: no Bot names a deleted provider', async () => {
      const org = await t.createOrganization('Providers Racing');
      const racing = await create(org.secret, { name: 'racing', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9999/v1' });
      await create(org.secret, { name: 'stays', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9999/v1' });
      const moving = await addBot(org.secret, 'Moving', 'stays/gpt');
      // A delete of the provider is under way: its transaction holds the row lock a delete takes.
      const deleter = new Client({ connectionString: t.database.url });
      await deleter.connect();
      try {
        await deleter.query('BEGIN');
        await deleter.query('SELECT 1 FROM model_providers WHERE id = $1 FOR UPDATE', [racing.id]);
        const created = t.http().post('/v1/bots').set('authorization', bearer(org.secret)).send({ name: 'Late', model: 'racing/gpt' }).then((res) => res);
        const changed = t.http().patch(`/v1/bots/${moving.id}`).set('authorization', bearer(org.secret)).send({ model: 'racing/gpt' }).then((res) => res);
        let settled = 0;
        void created.finally(() => settled++);
        void changed.finally(() => settled++);
        // Both requests reach the provider's row and wait on the delete's lock (or, without that lock, finish at once).
        for (;;) {
          const [waiting] = await t.database.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%model_providers%'`,
          );
          if (waiting!.n === 2 || settled === 2) break;
          await new Promise((resolve) => setImmediate(resolve));
        }
        await deleter.query('DELETE FROM model_providers WHERE id = $1', [racing.id]);
        await deleter.query('COMMIT');
        const [createRes, changeRes] = await Promise.all([created, changed]);
        expectDeclared(createRes, 400, 'InvalidInput');
        expect(issuePaths(createRes)).toEqual(['model']);
        expectDeclared(changeRes, 400, 'InvalidInput');
        expect(issuePaths(changeRes)).toEqual(['model']);
      } finally {
        await deleter.end();
      }
      const orphans = await t.database.query(
        `SELECT b.id FROM bots b WHERE b.organization_id = $1 AND NOT EXISTS (SELECT 1 FROM model_providers p WHERE p.organization_id = b.organization_id AND p.name = split_part(b.model, '/', 1))`,
        [org.organizationId],
      );
      expect(orphans).toEqual([]);
    });

    it('concurrent deletes and Bot creates naming one provider: either the delete is 409 naming the Bot, or the Bot is refused', async () => {
      const org = await t.createOrganization('Providers Concurrent');
      for (let round = 0; round < 6; round++) {
        const provider = await create(org.secret, { name: `concurrent-${round}`, kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9999/v1' });
        const [deleted, bot] = await Promise.all([
          t.http().delete(`/v1/model-providers/${provider.id}`).set('authorization', bearer(org.secret)),
          t.http().post('/v1/bots').set('authorization', bearer(org.secret)).send({ name: `Bot ${round}`, model: `concurrent-${round}/gpt` }),
        ]);
        if (bot.status === 201) {
          expect(deleted.status).toBe(409);
          expect(deleted.body).toMatchObject({ type: 'ModelProviderInUse', bots: [{ id: (bot.body as { id: string }).id }], botCount: 1 });
        } else {
          expect({ deleted: deleted.status, bot: bot.status, paths: issuePaths(bot) }).toEqual({ deleted: 200, bot: 400, paths: ['model'] });
        }
      }
    });
  });

  it('without a credential every route answers 401', async () => {
    expectDeclared(await t.http().get('/v1/model-providers'), 401, 'Unauthenticated');
    expectDeclared(await t.http().post('/v1/model-providers').send({ name: 'x', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/' }), 401, 'Unauthenticated');
    expectDeclared(await t.http().get('/v1/model-providers/0190c3f0-1234-7abc-8def-0123456789ab'), 401, 'Unauthenticated');
  });

  describe('[IDN-08] tenant isolation', () => {
    let a: Awaited<ReturnType<TestApp['createOrganization']>>;
    let b: Awaited<ReturnType<TestApp['createOrganization']>>;
    let aProvider: ProviderBody;

    beforeAll(async () => {
      a = await t.createOrganization('Models A');
      b = await t.createOrganization('Models B');
      aProvider = await create(a.secret, { name: 'shared-name', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9999/v1', apiKey: 'sk-a' });
    });

    it("[IDN-08] reading or deleting A's provider with B's key answers 404 exactly like an unknown id, and changes nothing", async () => {
      const unknownGet = await t.http().get('/v1/model-providers/0190c3f0-1234-7abc-8def-0123456789ab').set('authorization', bearer(b.secret));
      const foreignGet = await t.http().get(`/v1/model-providers/${aProvider.id}`).set('authorization', bearer(b.secret));
      expectDeclared(foreignGet, 404, 'ModelProviderNotFound');
      expect({ status: foreignGet.status, body: foreignGet.body }).toEqual({ status: unknownGet.status, body: unknownGet.body });
      const foreignDelete = await t.http().delete(`/v1/model-providers/${aProvider.id}`).set('authorization', bearer(b.secret));
      expectDeclared(foreignDelete, 404, 'ModelProviderNotFound');
      const [row] = await t.database.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM model_providers p JOIN sealed_records s ON s.id = p.api_key_record_id WHERE p.id = $1',
        [aProvider.id],
      );
      expect(row!.n).toBe(1);
      await t.http().get(`/v1/model-providers/${aProvider.id}`).set('authorization', bearer(a.secret)).expect(200);
    });

    it("[IDN-08] B's list never holds A's providers, also when paging from before A's IDs", async () => {
      expect(await listAll(b.secret)).toEqual([]);
      const paged = (await t.http().get('/v1/model-providers').query({ after: '00000000-0000-7000-8000-000000000000' }).set('authorization', bearer(b.secret)).expect(200))
        .body as Page;
      expect(paged).toEqual({ data: [], next: null });
      expect((await listAll(a.secret)).map((p) => p.id)).toEqual([aProvider.id]);
    });

    it('[IDN-08] names are unique per organization: B may use a name A already uses', async () => {
      const bProvider = await create(b.secret, { name: 'shared-name', kind: 'anthropic', baseUrl: 'http://127.0.0.1:9999' });
      expect(bProvider.id).not.toBe(aProvider.id);
      expect((await listAll(a.secret)).map((p) => p.id)).toEqual([aProvider.id]);
      expect((await listAll(b.secret)).map((p) => p.id)).toEqual([bProvider.id]);
    });
  });
});

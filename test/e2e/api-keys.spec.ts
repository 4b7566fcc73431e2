import { expectDeclared, issuePaths, UUID_V7 } from '../support/api-assertions';
import { bearer } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * API keys of an organization (`/v1/api-keys`): created with a secret shown once, listed without
 * secrets, revoked at once, refused when expired, and invisible to other organizations.
 */

const KEY_FIELDS = ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'memberId', 'name', 'revokedAt', 'scopes'];

interface ApiKeyBody {
  id: string;
  name: string;
  memberId: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}
interface CreatedKey extends ApiKeyBody {
  secret: string;
}
interface Page {
  data: ApiKeyBody[];
  next: string | null;
}

describe('API keys', () => {
  let t: TestApp;
  /** The owner of the main organization. */
  let owner: Awaited<ReturnType<TestApp['createOrganization']>>;

  async function createKey(secret: string, body: Record<string, unknown>): Promise<CreatedKey> {
    const res = await t.http().post('/v1/api-keys').set('authorization', bearer(secret)).send(body);
    expect(res.status).toBe(201);
    return res.body as CreatedKey;
  }

  async function listAll(secret: string): Promise<ApiKeyBody[]> {
    const res = await t.http().get('/v1/api-keys?limit=200').set('authorization', bearer(secret)).expect(200);
    return (res.body as Page).data;
  }

  beforeAll(async () => {
    t = await startTestApp();
    owner = await t.createOrganization('Keys Inc');
  });
  afterAll(async () => {
    await t.close();
  });

  it('POST /v1/api-keys answers 201 with the key and its secret, which works at once', async () => {
    const res = await t.http().post('/v1/api-keys').set('authorization', bearer(owner.secret)).send({ name: 'CI deploys' }).expect(201);
    const key = res.body as CreatedKey;
    expect(Object.keys(key).sort()).toEqual([...KEY_FIELDS, 'secret'].sort());
    expect(key).toEqual({
      id: expect.stringMatching(UUID_V7),
      name: 'CI deploys',
      memberId: owner.memberId,
      createdAt: expect.any(String),
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
      scopes: null,
      secret: expect.any(String),
    });
    expect(new Date(key.createdAt).toISOString()).toBe(key.createdAt);
    expect(key.secret).not.toBe(owner.secret);
    const me = await t.http().get('/v1/me').set('authorization', bearer(key.secret)).expect(200);
    expect(me.body).toEqual({
      organization: { id: owner.organizationId, name: 'Keys Inc' },
      member: { id: owner.memberId, role: 'owner', permissions: expect.arrayContaining(['api-keys.manage']) },
      apiKey: { id: key.id, name: 'CI deploys' },
    });
  });

  it('the secret is shown once: the list never carries a secret or any hash field', async () => {
    const key = await createKey(owner.secret, { name: 'shown once' });
    const res = await t.http().get('/v1/api-keys').set('authorization', bearer(owner.secret)).expect(200);
    const raw = JSON.stringify(res.body);
    expect(raw).not.toContain(key.secret);
    expect(raw).not.toContain(owner.secret);
    expect(raw.toLowerCase()).not.toContain('hash');
    expect(raw.toLowerCase()).not.toContain('secret');
    const page = res.body as Page;
    expect(page.data.map((k) => k.id)).toContain(key.id);
    for (const item of page.data) expect(Object.keys(item).sort()).toEqual(KEY_FIELDS);
    // Revoking answers the key without its secret too.
    const revoked = await t.http().delete(`/v1/api-keys/${key.id}`).set('authorization', bearer(owner.secret)).expect(200);
    expect(Object.keys(revoked.body as object).sort()).toEqual(KEY_FIELDS);
    expect(JSON.stringify(revoked.body)).not.toContain(key.secret);
  });

  it('the name is trimmed and validated like an organization name', async () => {
    const key = await createKey(owner.secret, { name: '  spaced  ' });
    expect(key.name).toBe('spaced');
    for (const [body, path] of [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: '  ' }, 'name'],
      [{ name: 'k'.repeat(201) }, 'name'],
      [{ name: 7 }, 'name'],
      [{ name: 'ok', memberId: owner.memberId }, 'memberId'],
      [{ name: 'ok', secret: 'obk_chosen' }, 'secret'],
    ] as Array<[Record<string, unknown>, string]>) {
      const res = await t.http().post('/v1/api-keys').set('authorization', bearer(owner.secret)).send(body);
      expectDeclared(res, 400, 'InvalidInput');
      expect(issuePaths(res)).toContain(path);
    }
  });

  describe('expiresAt', () => {
    it('a future expiresAt is kept and the key works until then', async () => {
      const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
      const key = await createKey(owner.secret, { name: 'expiring', expiresAt });
      expect(key.expiresAt).toBe(expiresAt);
      await t.http().get('/v1/me').set('authorization', bearer(key.secret)).expect(200);
      const listed = (await listAll(owner.secret)).find((k) => k.id === key.id);
      expect(listed?.expiresAt).toBe(expiresAt);
    });

    it.each([
      ['not a date', 'tomorrow'],
      ['an impossible calendar date', '2031-02-30T00:00:00Z'],
      ['a number', 1_900_000_000_000],
      ['an object', { at: '2031-01-01T00:00:00Z' }],
      ['an empty string', ''],
      // Strings the ISO 8601 check accepts but that are no JavaScript date: still input errors, never 500.
      ['a 4-digit signed year', '+9999-12-31T23:59:59Z'],
      ['a negative year', '-2030-01-01T00:00:00Z'],
      ['an ISO week date', '2031-W01'],
      ['the basic (compact) format', '20310101T000000Z'],
    ])('[ERR-02] expiresAt that is %s answers 400 with path expiresAt', async (_label, expiresAt) => {
      const before = await t.database.query<{ n: string }>('SELECT count(*)::text AS n FROM api_keys');
      const res = await t.http().post('/v1/api-keys').set('authorization', bearer(owner.secret)).send({ name: 'bad', expiresAt });
      expectDeclared(res, 400, 'InvalidInput');
      expect(issuePaths(res)).toEqual(['expiresAt']);
      const after = await t.database.query<{ n: string }>('SELECT count(*)::text AS n FROM api_keys');
      expect(after).toEqual(before);
    });

    it('[ERR-02] an expiresAt in the past answers 400 with path expiresAt', async () => {
      for (const expiresAt of [new Date(Date.now() - 60_000).toISOString(), '2001-01-01T00:00:00Z']) {
        const res = await t.http().post('/v1/api-keys').set('authorization', bearer(owner.secret)).send({ name: 'late', expiresAt });
        expectDeclared(res, 400, 'InvalidInput');
        expect(issuePaths(res)).toEqual(['expiresAt']);
      }
    });

    it('an expired key (expires_at moved to the past in the database) answers 401', async () => {
      const key = await createKey(owner.secret, { name: 'soon expired', expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
      await t.http().get('/v1/me').set('authorization', bearer(key.secret)).expect(200);
      await t.database.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [key.id]);
      expectDeclared(await t.http().get('/v1/me').set('authorization', bearer(key.secret)), 401, 'Unauthenticated');
      expectDeclared(await t.http().get('/v1/api-keys').set('authorization', bearer(key.secret)), 401, 'Unauthenticated');
      expectDeclared(await t.http().post('/v1/api-keys').set('authorization', bearer(key.secret)).send({ name: 'x' }), 401, 'Unauthenticated');
      // The expired key still shows in the list, with its expiry.
      const listed = (await listAll(owner.secret)).find((k) => k.id === key.id);
      expect(listed).toBeDefined();
      expect(new Date(listed!.expiresAt!).getTime()).toBeLessThan(Date.now() + 1);
    });
  });

  it('lastUsedAt is null until the key is used, then set', async () => {
    const key = await createKey(owner.secret, { name: 'usage' });
    expect((await listAll(owner.secret)).find((k) => k.id === key.id)?.lastUsedAt).toBeNull();
    await t.http().get('/v1/me').set('authorization', bearer(key.secret)).expect(200);
    const listed = (await listAll(owner.secret)).find((k) => k.id === key.id);
    expect(listed?.lastUsedAt).toEqual(expect.any(String));
    expect(new Date(listed!.lastUsedAt!).getTime()).toBeGreaterThanOrEqual(new Date(key.createdAt).getTime());
    // A failed attempt with a wrong secret for this key does not count as use.
    const other = await createKey(owner.secret, { name: 'unused' });
    const forged = `${other.secret.slice(0, -2)}${other.secret.endsWith('AA') ? 'BB' : 'AA'}`;
    await t.http().get('/v1/me').set('authorization', bearer(forged)).expect(401);
    expect((await listAll(owner.secret)).find((k) => k.id === other.id)?.lastUsedAt).toBeNull();
  });

  describe('revoking', () => {
    it('DELETE /v1/api-keys/{id} answers 200 with revokedAt, and the key is refused immediately', async () => {
      const key = await createKey(owner.secret, { name: 'to revoke' });
      await t.http().get('/v1/me').set('authorization', bearer(key.secret)).expect(200);
      const res = await t.http().delete(`/v1/api-keys/${key.id}`).set('authorization', bearer(owner.secret)).expect(200);
      const revoked = res.body as ApiKeyBody;
      expect(revoked).toEqual({ ...key, secret: undefined, lastUsedAt: expect.any(String), revokedAt: expect.any(String) });
      expect(new Date(revoked.revokedAt!).toISOString()).toBe(revoked.revokedAt);
      expectDeclared(await t.http().get('/v1/me').set('authorization', bearer(key.secret)), 401, 'Unauthenticated');
      expectDeclared(await t.http().get('/v1/api-keys').set('authorization', bearer(key.secret)), 401, 'Unauthenticated');
      // Still listed, as revoked.
      expect((await listAll(owner.secret)).find((k) => k.id === key.id)?.revokedAt).toBe(revoked.revokedAt);
    });

    it('revoking twice is fine and keeps the first revokedAt', async () => {
      const key = await createKey(owner.secret, { name: 'twice' });
      const first = (await t.http().delete(`/v1/api-keys/${key.id}`).set('authorization', bearer(owner.secret)).expect(200)).body as ApiKeyBody;
      const second = (await t.http().delete(`/v1/api-keys/${key.id}`).set('authorization', bearer(owner.secret)).expect(200)).body as ApiKeyBody;
      expect(second.revokedAt).toBe(first.revokedAt);
      expect(second).toEqual(first);
    });

    it('a key may revoke itself; its next request is refused', async () => {
      const key = await createKey(owner.secret, { name: 'self' });
      await t.http().delete(`/v1/api-keys/${key.id}`).set('authorization', bearer(key.secret)).expect(200);
      expectDeclared(await t.http().get('/v1/me').set('authorization', bearer(key.secret)), 401, 'Unauthenticated');
    });

    it('a malformed or unknown id answers 404 ApiKeyNotFound, identically', async () => {
      const unknown = await t.http().delete('/v1/api-keys/0190c3f0-1234-7abc-8def-0123456789ab').set('authorization', bearer(owner.secret));
      expectDeclared(unknown, 404, 'ApiKeyNotFound');
      for (const id of ['not-a-uuid', '123', `${owner.apiKeyId}x`, 'null', '%20', owner.apiKeyId.replaceAll('-', '')]) {
        const res = await t.http().delete(`/v1/api-keys/${id}`).set('authorization', bearer(owner.secret));
        expectDeclared(res, 404, 'ApiKeyNotFound');
        expect(res.body).toEqual(unknown.body);
      }
      // The owner key was not touched by any of that.
      await t.http().get('/v1/me').set('authorization', bearer(owner.secret)).expect(200);
    });
  });

  it('the list is oldest first and paginates with after/limit', async () => {
    const org = await t.createOrganization('Paging');
    const made = [org.apiKeyId];
    for (const name of ['k1', 'k2', 'k3', 'k4']) made.push((await createKey(org.secret, { name })).id);

    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const query: Record<string, string | number> = { limit: 2 };
      if (after !== null) query.after = after;
      const res = await t.http().get('/v1/api-keys').query(query).set('authorization', bearer(org.secret)).expect(200);
      const page = res.body as Page;
      expect(Object.keys(page).sort()).toEqual(['data', 'next']);
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((k) => k.id));
      after = page.next;
      pages += 1;
    } while (after !== null && pages < 10);
    expect(seen).toEqual(made);
    expect(pages).toBeGreaterThanOrEqual(3);

    const firstTwo = (await t.http().get('/v1/api-keys?limit=2').set('authorization', bearer(org.secret)).expect(200)).body as Page;
    expect(firstTwo.data.map((k) => k.name)).toEqual([expect.any(String), 'k1']);
    expect(firstTwo.next).toEqual(expect.any(String));
    const all = (await t.http().get('/v1/api-keys').set('authorization', bearer(org.secret)).expect(200)).body as Page;
    expect(all.data.map((k) => k.id)).toEqual(made);
    expect(all.next).toBeNull();

    for (const [query, path] of [
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=two', 'limit'],
      ['after=garbage', 'after'],
    ]) {
      const res = await t.http().get(`/v1/api-keys?${query}`).set('authorization', bearer(org.secret));
      expectDeclared(res, 400, 'InvalidInput');
      expect(issuePaths(res)).toContain(path);
    }
  });

  describe('[IDN-08] tenant isolation', () => {
    let a: Awaited<ReturnType<TestApp['createOrganization']>>;
    let b: Awaited<ReturnType<TestApp['createOrganization']>>;
    let aKey: CreatedKey;

    beforeAll(async () => {
      a = await t.createOrganization('Tenant A');
      b = await t.createOrganization('Tenant B');
      aKey = await createKey(a.secret, { name: 'a-second' });
      await createKey(b.secret, { name: 'b-second' });
    });

    it("[IDN-08] organization B's list holds only B's keys, also when paging past A's IDs", async () => {
      const bKeys = await listAll(b.secret);
      expect(bKeys.map((k) => k.name)).toEqual([expect.any(String), 'b-second']);
      expect(bKeys.map((k) => k.id)).not.toContain(a.apiKeyId);
      expect(bKeys.map((k) => k.id)).not.toContain(aKey.id);
      for (const k of bKeys) expect(k.memberId).toBe(b.memberId);
      // A cursor pointing before A's keys does not reveal them either.
      const paged = (await t.http().get('/v1/api-keys').query({ after: '00000000-0000-7000-8000-000000000000' }).set('authorization', bearer(b.secret)).expect(200))
        .body as Page;
      expect(paged.data.map((k) => k.id)).toEqual(bKeys.map((k) => k.id));
      // And A sees only its own.
      const aKeys = await listAll(a.secret);
      expect(aKeys.map((k) => k.id)).toEqual([a.apiKeyId, aKey.id]);
    });

    it("[IDN-08] revoking A's key with B's key answers 404 exactly like an unknown id, and changes nothing", async () => {
      const unknown = await t.http().delete('/v1/api-keys/0190c3f0-1234-7abc-8def-0123456789ab').set('authorization', bearer(b.secret));
      const foreign = await t.http().delete(`/v1/api-keys/${aKey.id}`).set('authorization', bearer(b.secret));
      expectDeclared(foreign, 404, 'ApiKeyNotFound');
      expect({ status: foreign.status, body: foreign.body }).toEqual({ status: unknown.status, body: unknown.body });
      const [row] = await t.database.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM api_keys WHERE id = $1', [aKey.id]);
      expect(row?.revoked_at).toBeNull();
      await t.http().get('/v1/me').set('authorization', bearer(aKey.secret)).expect(200);
      // A's owner key too.
      expectDeclared(await t.http().delete(`/v1/api-keys/${a.apiKeyId}`).set('authorization', bearer(b.secret)), 404, 'ApiKeyNotFound');
      await t.http().get('/v1/me').set('authorization', bearer(a.secret)).expect(200);
    });

    it("[IDN-08] a key B creates belongs to B's organization and member", async () => {
      const key = await createKey(b.secret, { name: 'b-third' });
      expect(key.memberId).toBe(b.memberId);
      const me = await t.http().get('/v1/me').set('authorization', bearer(key.secret)).expect(200);
      expect((me.body as { organization: { id: string } }).organization.id).toBe(b.organizationId);
      expect((await listAll(a.secret)).map((k) => k.id)).not.toContain(key.id);
    });
  });
});

import { addProvider, expectDeclared, issuePaths, UNKNOWN_ID } from '../support/api-assertions';
import { bearer } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Bot memory items over the API (`/v1/bots/{botId}/memories`, decision 030): created with tags,
 * an access rule and source links, listed without content, read with content by the members the
 * rule admits, retagged and archived without touching the sealed content, deleted; another
 * organization's Bot and items are 404.
 */

interface MemoryBody {
  id: string;
  botId: string;
  tags: string[];
  access: { kind: string; ids?: string[]; roles?: string[] };
  sources: Array<{ type: string; id: string }>;
  status: string;
  createdAt: string;
  updatedAt: string;
  content?: string;
}

const SECRET_FACT = 'Priya prefers invoices in Norwegian kroner';

describe('memories', () => {
  let t: TestApp;
  let owner: Awaited<ReturnType<TestApp['createOrganization']>>;
  let botId: string;
  let viewerSecret: string;
  let memberSecret: string;
  let memberId: string;

  const auth = (secret: string) => bearer(secret);
  const url = (path = '') => `/v1/bots/${botId}/memories${path}`;

  async function add(body: Record<string, unknown>, secret = owner.secret): Promise<MemoryBody> {
    const res = await t.http().post(url()).set('authorization', auth(secret)).send(body);
    expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 201, body: expect.anything() });
    return res.body as MemoryBody;
  }

  beforeAll(async () => {
    t = await startTestApp();
    owner = await t.createOrganization('Memory Org');
    await addProvider(t, owner.secret, 'local');
    const bot = await t.http().post('/v1/bots').set('authorization', auth(owner.secret)).send({ name: 'Rememberer', model: 'local/m', memory: { enabled: true, learn: false } }).expect(201);
    botId = (bot.body as { id: string }).id;
    expect((bot.body as { memory: unknown }).memory).toEqual({ enabled: true, learn: false, learnAccess: 'member' });
    const viewer = await t.http().post('/v1/members').set('authorization', auth(owner.secret)).send({ role: 'viewer', name: 'V' }).expect(201);
    viewerSecret = (viewer.body as { apiKey: { secret: string } }).apiKey.secret;
    const member = await t.http().post('/v1/members').set('authorization', auth(owner.secret)).send({ role: 'member', name: 'M' }).expect(201);
    memberSecret = (member.body as { apiKey: { secret: string } }).apiKey.secret;
    memberId = (member.body as { member: { id: string } }).member.id;
  });

  afterAll(async () => {
    await t?.close();
  });

  it('creates an item with defaults, lists it without content and reads it with content', async () => {
    const item = await add({ content: SECRET_FACT, tags: ['Billing', 'billing', 'people'] });
    expect(item).toEqual({
      id: expect.any(String),
      botId,
      tags: ['billing', 'people'],
      access: { kind: 'bot' },
      sources: [],
      status: 'active',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const list = await t.http().get(url()).set('authorization', auth(viewerSecret)).expect(200);
    const listed = (list.body as { data: MemoryBody[] }).data.find((m) => m.id === item.id)!;
    expect(listed).toBeDefined();
    expect(listed).not.toHaveProperty('content');
    const one = await t.http().get(url(`/${item.id}`)).set('authorization', auth(viewerSecret)).expect(200);
    expect((one.body as MemoryBody).content).toBe(SECRET_FACT);
  });

  it('[MEM-03] the content is sealed at rest and search keeps no plaintext: only keyed hashes of words', async () => {
    const item = await add({ content: 'The warehouse door code is ZEBRA-4471', tags: ['facility'] });
    const [row] = await t.database.query<{ content: Buffer }>('SELECT content FROM memory_items WHERE id = $1', [item.id]);
    expect(row!.content.includes(Buffer.from('ZEBRA'))).toBe(false);
    expect(row!.content.toString('latin1').toLowerCase()).not.toContain('warehouse');
    const words = (await t.database.query<{ word: string }>('SELECT word FROM memory_words WHERE item_id = $1', [item.id])).map((r) => r.word);
    // "the" and "is" are stop words; the other five are indexed, as hashes only.
    expect(words).toHaveLength(5);
    for (const word of words) {
      expect(word).toMatch(/^[A-Za-z0-9_-]{22}$/);
      for (const plain of ['warehouse', 'door', 'code', 'zebra', '4471']) expect(word.toLowerCase()).not.toContain(plain);
    }
    // No text search column or index holds the words.
    const columns = await t.database.query<{ data_type: string }>(`SELECT data_type FROM information_schema.columns WHERE table_name = 'memory_items' AND data_type = 'tsvector'`);
    expect(columns).toEqual([]);
    // Whole words match through the index, in any case; parts of words do not.
    const found = await t.http().get(url('?q=ZEBRA%20warehouse')).set('authorization', auth(owner.secret)).expect(200);
    expect((found.body as { data: MemoryBody[] }).data.map((m) => m.id)).toEqual([item.id]);
    const partial = await t.http().get(url('?q=ware')).set('authorization', auth(owner.secret)).expect(200);
    expect((partial.body as { data: MemoryBody[] }).data).toEqual([]);
  });

  it('filters by every tag named', async () => {
    const both = await add({ content: 'Tagged twice', tags: ['alpha', 'beta'] });
    const one = await add({ content: 'Tagged once', tags: ['alpha'] });
    const res = await t.http().get(url('?tag=alpha&tag=beta')).set('authorization', auth(owner.secret)).expect(200);
    expect((res.body as { data: MemoryBody[] }).data.map((m) => m.id)).toEqual([both.id]);
    const alpha = await t.http().get(url('?tag=alpha')).set('authorization', auth(owner.secret)).expect(200);
    expect((alpha.body as { data: MemoryBody[] }).data.map((m) => m.id)).toEqual([both.id, one.id]);
  });

  it('[MEM-03] changing tags or status keeps the content ciphertext byte-identical', async () => {
    const item = await add({ content: 'Ciphertext must not move', tags: ['x'] });
    const wordsOf = async () => (await t.database.query<{ word: string }>('SELECT word FROM memory_words WHERE item_id = $1 ORDER BY word', [item.id])).map((r) => r.word);
    const before = await t.database.query<{ content: Buffer; content_key_id: string }>('SELECT content, content_key_id FROM memory_items WHERE id = $1', [item.id]);
    const wordsBefore = await wordsOf();
    const patched = await t.http().patch(url(`/${item.id}`)).set('authorization', auth(owner.secret)).send({ tags: ['y', 'z'], status: 'archived' }).expect(200);
    expect(patched.body).toEqual({ ...item, tags: ['y', 'z'], status: 'archived', updatedAt: expect.any(String) });
    expect(patched.body).not.toHaveProperty('content');
    const after = await t.database.query<{ content: Buffer; content_key_id: string }>('SELECT content, content_key_id FROM memory_items WHERE id = $1', [item.id]);
    expect(after[0]!.content.equals(before[0]!.content)).toBe(true);
    expect(after[0]!.content_key_id).toBe(before[0]!.content_key_id);
    expect(await wordsOf()).toEqual(wordsBefore);
    const read = await t.http().get(url(`/${item.id}`)).set('authorization', auth(owner.secret)).expect(200);
    expect((read.body as MemoryBody).content).toBe('Ciphertext must not move');
  });

  it('an access rule admits only its members to the content; owners and admins read every item', async () => {
    const forMember = await add({ content: 'Only for M', access: { kind: 'members', ids: [memberId] } });
    const forAdmins = await add({ content: 'Only for admins', access: { kind: 'roles', roles: ['admin'] } });
    expect(forMember.access).toEqual({ kind: 'members', ids: [memberId] });
    await t.http().get(url(`/${forMember.id}`)).set('authorization', auth(memberSecret)).expect(200);
    // An item the rule excludes is not there for the reader: 404, as for an unknown ID.
    expectDeclared(await t.http().get(url(`/${forMember.id}`)).set('authorization', auth(viewerSecret)), 404, 'MemoryNotFound');
    expectDeclared(await t.http().get(url(`/${forAdmins.id}`)).set('authorization', auth(memberSecret)), 404, 'MemoryNotFound');
    const asOwner = await t.http().get(url(`/${forAdmins.id}`)).set('authorization', auth(owner.secret)).expect(200);
    expect((asOwner.body as MemoryBody).content).toBe('Only for admins');
  });

  it('[IDN-08] [MEM-01] list and search apply the access rule in the query: a viewer cannot confirm the words of an owner-only item', async () => {
    const ownerOnly = await add({ content: 'Layoffs planned in Berlin for March', tags: ['plans'], access: { kind: 'members', ids: [owner.memberId] } });
    const forMembers = await add({ content: 'Berlin team offsite in May', tags: ['plans'], access: { kind: 'roles', roles: ['member'] } });
    const forEveryone = await add({ content: 'Berlin office opens at nine', tags: ['plans'] });
    const ids = async (secret: string, query: string): Promise<string[]> => {
      const res = await t.http().get(url(query)).set('authorization', auth(secret)).expect(200);
      return (res.body as { data: MemoryBody[] }).data.map((m) => m.id);
    };
    // The attack: a search that matches only the owner's item answers nothing to a viewer, exactly like a miss.
    expect(await ids(viewerSecret, '?q=layoffs%20berlin')).toEqual([]);
    expect(await ids(viewerSecret, '?q=layoffs%20paris')).toEqual([]);
    expect(await ids(viewerSecret, '?q=berlin')).toEqual([forEveryone.id]);
    expect(await ids(viewerSecret, '?tag=plans')).toEqual([forEveryone.id]);
    // A member the role rule admits sees that item too, still not the owner's.
    expect(await ids(memberSecret, '?tag=plans')).toEqual([forMembers.id, forEveryone.id]);
    expect(await ids(memberSecret, '?q=layoffs')).toEqual([]);
    // Pages are cut after the rule: the first page of one is the first item the reader may see.
    const first = await t.http().get(url('?tag=plans&limit=1')).set('authorization', auth(viewerSecret)).expect(200);
    expect(first.body).toEqual({ data: [expect.objectContaining({ id: forEveryone.id })], next: null });
    // Owners and admins see every item.
    const admin = await t.http().post('/v1/members').set('authorization', auth(owner.secret)).send({ role: 'admin', name: 'A' }).expect(201);
    const adminSecret = (admin.body as { apiKey: { secret: string } }).apiKey.secret;
    expect(await ids(owner.secret, '?q=layoffs%20berlin')).toEqual([ownerOnly.id]);
    expect(await ids(adminSecret, '?tag=plans')).toEqual([ownerOnly.id, forMembers.id, forEveryone.id]);
  });

  it('[IDN-08] [MEM-01] a roles rule includes the roles above those it names, in list, search and read alike', async () => {
    const forViewers = await add({ content: 'Canteen menu for viewers and up', tags: ['canteen'], access: { kind: 'roles', roles: ['viewer'] } });
    const forMembers = await add({ content: 'Canteen budget for members and up', tags: ['canteen'], access: { kind: 'roles', roles: ['member'] } });
    const forAdmins = await add({ content: 'Canteen contract for admins and up', tags: ['canteen'], access: { kind: 'roles', roles: ['admin'] } });
    const ids = async (secret: string, query: string): Promise<string[]> => {
      const res = await t.http().get(url(query)).set('authorization', auth(secret)).expect(200);
      return (res.body as { data: MemoryBody[] }).data.map((m) => m.id);
    };
    // A member is above a viewer: a viewer item is theirs too, an admin item is not.
    expect(await ids(memberSecret, '?tag=canteen')).toEqual([forViewers.id, forMembers.id]);
    expect(await ids(memberSecret, '?q=canteen%20menu')).toEqual([forViewers.id]);
    expect(await ids(memberSecret, '?q=canteen%20contract')).toEqual([]);
    expect((await t.http().get(url(`/${forViewers.id}`)).set('authorization', auth(memberSecret)).expect(200)).body).toMatchObject({ content: 'Canteen menu for viewers and up' });
    expectDeclared(await t.http().get(url(`/${forAdmins.id}`)).set('authorization', auth(memberSecret)), 404, 'MemoryNotFound');
    // A viewer is below a member.
    expect(await ids(viewerSecret, '?tag=canteen')).toEqual([forViewers.id]);
    expectDeclared(await t.http().get(url(`/${forMembers.id}`)).set('authorization', auth(viewerSecret)), 404, 'MemoryNotFound');
    // A member may change an item its role is included in.
    await t.http().patch(url(`/${forViewers.id}`)).set('authorization', auth(memberSecret)).send({ tags: ['canteen', 'menu'] }).expect(200);
  });

  it('[IDN-08] a member the access rule excludes cannot archive, retag or delete the item: 404, and it stays as it was', async () => {
    const ownerOnly = await add({ content: 'Salary bands for 2027', tags: ['hr'], access: { kind: 'members', ids: [owner.memberId] } });
    const mine = await add({ content: 'M may tidy this one', tags: ['hr'], access: { kind: 'members', ids: [memberId] } });
    // The member has bots.write, but the rule does not admit them.
    expectDeclared(await t.http().patch(url(`/${ownerOnly.id}`)).set('authorization', auth(memberSecret)).send({ status: 'archived' }), 404, 'MemoryNotFound');
    expectDeclared(await t.http().patch(url(`/${ownerOnly.id}`)).set('authorization', auth(memberSecret)).send({ tags: ['junk'] }), 404, 'MemoryNotFound');
    expectDeclared(await t.http().delete(url(`/${ownerOnly.id}`)).set('authorization', auth(memberSecret)), 404, 'MemoryNotFound');
    const [row] = await t.database.query<{ tags: string[]; status: string }>('SELECT tags, status FROM memory_items WHERE id = $1', [ownerOnly.id]);
    expect(row).toEqual({ tags: ['hr'], status: 'active' });
    // An item the rule admits them to they may change and delete; owners change every item.
    await t.http().patch(url(`/${mine.id}`)).set('authorization', auth(memberSecret)).send({ tags: ['tidy'] }).expect(200);
    await t.http().delete(url(`/${mine.id}`)).set('authorization', auth(memberSecret)).expect(200);
    await t.http().patch(url(`/${ownerOnly.id}`)).set('authorization', auth(owner.secret)).send({ status: 'archived' }).expect(200);
  });

  it('keeps source links and refuses malformed input with the offending fields', async () => {
    const chatId = '0190c3f0-1234-7abc-8def-0123456789ac';
    const item = await add({ content: 'Linked', sources: [{ type: 'chat', id: chatId }, { type: 'url', id: 'https://example.com/a' }] });
    expect(item.sources).toEqual([{ type: 'chat', id: chatId }, { type: 'url', id: 'https://example.com/a' }]);
    const bad = await t
      .http()
      .post(url())
      .set('authorization', auth(owner.secret))
      .send({ content: '', tags: ['ok', 'not ok!'], access: { kind: 'members', ids: ['nope'] }, sources: [{ type: 'disk', id: 'x' }] });
    expectDeclared(bad, 400, 'InvalidInput');
    expect(issuePaths(bad)).toEqual(expect.arrayContaining(['content']));
    const semantic = await t
      .http()
      .post(url())
      .set('authorization', auth(owner.secret))
      .send({ content: 'x', tags: ['not ok!'], access: { kind: 'members', ids: ['nope'] } });
    expectDeclared(semantic, 400, 'InvalidInput');
    expect(issuePaths(semantic)).toEqual(['tags.0']);
    const badAccess = await t.http().post(url()).set('authorization', auth(owner.secret)).send({ content: 'x', access: { kind: 'members', ids: ['nope'] } });
    expect(issuePaths(badAccess)).toEqual(['access.ids.0']);
    const badSource = await t.http().post(url()).set('authorization', auth(owner.secret)).send({ content: 'x', sources: [{ type: 'chat', id: 'nope' }] });
    expect(issuePaths(badSource)).toEqual(['sources.0.id']);
    expectDeclared(await t.http().patch(url(`/${item.id}`)).set('authorization', auth(owner.secret)).send({ status: 'gone' }), 400, 'InvalidInput');
  });

  it('deletes an item and answers it', async () => {
    const item = await add({ content: 'Short-lived' });
    const res = await t.http().delete(url(`/${item.id}`)).set('authorization', auth(owner.secret)).expect(200);
    expect((res.body as MemoryBody).id).toBe(item.id);
    expectDeclared(await t.http().get(url(`/${item.id}`)).set('authorization', auth(owner.secret)), 404, 'MemoryNotFound');
  });

  it('a viewer reads but cannot write', async () => {
    expectDeclared(await t.http().post(url()).set('authorization', auth(viewerSecret)).send({ content: 'no' }), 403, 'Forbidden');
  });

  it("[IDN-08] another organization's Bot and items answer 404, alike with unknown and malformed IDs", async () => {
    const item = await add({ content: 'Ours' });
    const other = await t.createOrganization('Other Org');
    for (const path of [url(), url(`/${item.id}`)]) {
      expectDeclared(await t.http().get(path).set('authorization', auth(other.secret)), 404, 'BotNotFound');
    }
    expectDeclared(await t.http().patch(url(`/${item.id}`)).set('authorization', auth(other.secret)).send({ tags: ['x'] }), 404, 'BotNotFound');
    expectDeclared(await t.http().delete(url(`/${item.id}`)).set('authorization', auth(other.secret)), 404, 'BotNotFound');
    expectDeclared(await t.http().post(url()).set('authorization', auth(other.secret)).send({ content: 'theirs' }), 404, 'BotNotFound');
    expectDeclared(await t.http().get(`/v1/bots/${UNKNOWN_ID}/memories`).set('authorization', auth(owner.secret)), 404, 'BotNotFound');
    expectDeclared(await t.http().get('/v1/bots/not-a-uuid/memories/also-not').set('authorization', auth(owner.secret)), 404, 'BotNotFound');
    expectDeclared(await t.http().get(url('/not-a-uuid')).set('authorization', auth(owner.secret)), 404, 'MemoryNotFound');
    const [row] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM memory_items WHERE id = $1', [item.id]);
    expect(row!.n).toBe(1);
  });
});

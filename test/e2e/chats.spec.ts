import { addProvider, expectDeclared, ISO, issuePaths, UNKNOWN_ID, UUID_V7 } from '../support/api-assertions';
import { bearer } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Chats of an organization (`/v1/chats`): created with one of the organization's Bots, read and
 * listed (optionally by Bot); other organizations never see them (IDN-08), and a Bot with Chats
 * cannot be deleted (409 BotHasChats). Messages and Turns come with the engine workflow.
 */

const CHAT_FIELDS = ['botId', 'createdAt', 'id', 'parentExecutionId'];

interface ChatBody {
  id: string;
  botId: string;
  parentExecutionId: string | null;
  createdAt: string;
}
interface Page {
  data: ChatBody[];
  next: string | null;
}

describe('chats', () => {
  let t: TestApp;
  let owner: Awaited<ReturnType<TestApp['createOrganization']>>;
  let botId: string;

  async function createBot(secret: string, provider: string): Promise<string> {
    const res = await t.http().post('/v1/bots').set('authorization', bearer(secret)).send({ name: 'Bot', model: `${provider}/m` }).expect(201);
    return (res.body as { id: string }).id;
  }

  async function create(secret: string, body: Record<string, unknown>): Promise<ChatBody> {
    const res = await t.http().post('/v1/chats').set('authorization', bearer(secret)).send(body);
    expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 201, body: expect.anything() });
    return res.body as ChatBody;
  }

  async function countChats(): Promise<number> {
    const [row] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM chats');
    return row!.n;
  }

  beforeAll(async () => {
    t = await startTestApp();
    owner = await t.createOrganization('Chats Inc');
    await addProvider(t, owner.secret, 'local');
    botId = await createBot(owner.secret, 'local');
  });
  afterAll(async () => {
    await t.close();
  });

  it('POST /v1/chats answers 201 with every field, and GET reads it back', async () => {
    const res = await t.http().post('/v1/chats').set('authorization', bearer(owner.secret)).send({ botId }).expect(201);
    expect(res.body).toEqual({ id: expect.stringMatching(UUID_V7), botId, parentExecutionId: null, createdAt: expect.stringMatching(ISO) });
    expect(Object.keys(res.body as object).sort()).toEqual(CHAT_FIELDS);
    const chat = res.body as ChatBody;
    const read = await t.http().get(`/v1/chats/${chat.id}`).set('authorization', bearer(owner.secret)).expect(200);
    expect(read.body).toEqual(chat);
  });

  it('the list is oldest first, paginates with after/limit and filters by botId', async () => {
    const org = await t.createOrganization('Paging Chats');
    await addProvider(t, org.secret, 'p');
    const first = await createBot(org.secret, 'p');
    const second = await createBot(org.secret, 'p');
    const chats: ChatBody[] = [];
    for (const bot of [first, second, first, second, first]) chats.push(await create(org.secret, { botId: bot }));

    async function collect(query: Record<string, string | number>): Promise<{ ids: string[]; pages: number }> {
      const ids: string[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const q: Record<string, string | number> = { ...query, limit: 2 };
        if (after !== null) q.after = after;
        const page = (await t.http().get('/v1/chats').query(q).set('authorization', bearer(org.secret)).expect(200)).body as Page;
        expect(Object.keys(page).sort()).toEqual(['data', 'next']);
        expect(page.data.length).toBeLessThanOrEqual(2);
        for (const item of page.data) expect(Object.keys(item).sort()).toEqual(CHAT_FIELDS);
        ids.push(...page.data.map((c) => c.id));
        after = page.next;
        pages += 1;
      } while (after !== null && pages < 10);
      return { ids, pages };
    }

    expect(await collect({})).toEqual({ ids: chats.map((c) => c.id), pages: 3 });
    expect(await collect({ botId: first })).toEqual({ ids: chats.filter((c) => c.botId === first).map((c) => c.id), pages: 2 });
    expect(await collect({ botId: second })).toEqual({ ids: chats.filter((c) => c.botId === second).map((c) => c.id), pages: 1 });
    expect(await collect({ botId: UNKNOWN_ID })).toEqual({ ids: [], pages: 1 });
    for (const [query, path] of [
      ['limit=0', 'limit'],
      ['after=garbage', 'after'],
      ['botId=garbage', 'botId'],
      [`botId=${first}&botId=${second}`, 'botId'],
    ]) {
      const res = await t.http().get(`/v1/chats?${query}`).set('authorization', bearer(org.secret));
      expectDeclared(res, 400, 'InvalidInput');
      expect(issuePaths(res)).toEqual([path]);
    }
  });

  it.each([['malformed', 'not-a-uuid'], ['unknown', UNKNOWN_ID]])('a %s chat id answers 404 ChatNotFound', async (_label, id) => {
    expectDeclared(await t.http().get(`/v1/chats/${id}`).set('authorization', bearer(owner.secret)), 404, 'ChatNotFound');
  });

  it('an unknown Bot answers 404 BotNotFound, and writes nothing', async () => {
    const before = await countChats();
    expectDeclared(await t.http().post('/v1/chats').set('authorization', bearer(owner.secret)).send({ botId: UNKNOWN_ID }), 404, 'BotNotFound');
    expect(await countChats()).toBe(before);
  });

  it.each([
    ['no botId', {}, ['botId']],
    ['a malformed botId', { botId: 'not-a-uuid' }, ['botId']],
    ['a botId that is no string', { botId: 42 }, ['botId']],
    ['an unknown field', { botId: UNKNOWN_ID, organizationId: 'x' }, ['organizationId']],
  ])('[ERR-02] %s answers 400 InvalidInput naming exactly the field, and writes nothing', async (_label, body, paths) => {
    const before = await countChats();
    const res = await t.http().post('/v1/chats').set('authorization', bearer(owner.secret)).send(body);
    expectDeclared(res, 400, 'InvalidInput');
    expect([...new Set(issuePaths(res))]).toEqual(paths);
    expect(await countChats()).toBe(before);
  });

  it('deleting a Bot that has Chats answers 409 BotHasChats and keeps the Bot; without Chats it is deleted', async () => {
    const bot = await createBot(owner.secret, 'local');
    const chat = await create(owner.secret, { botId: bot });
    const res = await t.http().delete(`/v1/bots/${bot}`).set('authorization', bearer(owner.secret));
    expectDeclared(res, 409, 'BotHasChats');
    await t.http().get(`/v1/bots/${bot}`).set('authorization', bearer(owner.secret)).expect(200);
    await t.http().get(`/v1/chats/${chat.id}`).set('authorization', bearer(owner.secret)).expect(200);
    const lonely = await createBot(owner.secret, 'local');
    await t.http().delete(`/v1/bots/${lonely}`).set('authorization', bearer(owner.secret)).expect(200);
  });

  it('deleting an organization removes its Bots and Chats together', async () => {
    const org = await t.createOrganization('Short-lived');
    await addProvider(t, org.secret, 'p');
    const bot = await createBot(org.secret, 'p');
    const chat = await create(org.secret, { botId: bot });
    await t.database.query('DELETE FROM organizations WHERE id = (SELECT organization_id FROM chats WHERE id = $1)', [chat.id]);
    expect(await t.database.query('SELECT id FROM chats WHERE id = $1', [chat.id])).toEqual([]);
    expect(await t.database.query('SELECT id FROM bots WHERE id = $1', [bot])).toEqual([]);
  });

  it('POST /v1/chats/{id}/stop with content-type application/json and no body (what curl sends) stops the Chat: an empty JSON body is no body', async () => {
    const chat = await create(owner.secret, { botId });
    const res = await t.http().post(`/v1/chats/${chat.id}/stop`).set('authorization', bearer(owner.secret)).set('content-type', 'application/json').send('');
    expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 202, body: { executionIds: [] } });
    // A route that needs a body still says what is missing, naming the body.
    const create400 = await t.http().post('/v1/chats').set('authorization', bearer(owner.secret)).set('content-type', 'application/json').send('');
    expectDeclared(create400, 400, 'InvalidInput');
    expect(issuePaths(create400).length).toBeGreaterThan(0);
  });

  it('without a credential every route answers 401', async () => {
    expectDeclared(await t.http().get('/v1/chats'), 401, 'Unauthenticated');
    expectDeclared(await t.http().post('/v1/chats').send({ botId }), 401, 'Unauthenticated');
    expectDeclared(await t.http().get(`/v1/chats/${UNKNOWN_ID}`), 401, 'Unauthenticated');
  });

  describe('[IDN-08] tenant isolation', () => {
    let a: Awaited<ReturnType<TestApp['createOrganization']>>;
    let b: Awaited<ReturnType<TestApp['createOrganization']>>;
    let aBot: string;
    let aChat: ChatBody;

    beforeAll(async () => {
      a = await t.createOrganization('Chats A');
      b = await t.createOrganization('Chats B');
      await addProvider(t, a.secret, 'a-only');
      await addProvider(t, b.secret, 'b-only');
      aBot = await createBot(a.secret, 'a-only');
      aChat = await create(a.secret, { botId: aBot });
    });

    it("[IDN-08] reading A's Chat with B's key answers 404 exactly like an unknown id", async () => {
      const unknown = await t.http().get(`/v1/chats/${UNKNOWN_ID}`).set('authorization', bearer(b.secret));
      const answer = await t.http().get(`/v1/chats/${aChat.id}`).set('authorization', bearer(b.secret));
      expectDeclared(answer, 404, 'ChatNotFound');
      expect({ status: answer.status, body: answer.body as unknown }).toEqual({ status: unknown.status, body: unknown.body as unknown });
    });

    it("[IDN-08] creating a Chat with A's Bot using B's key answers 404 BotNotFound exactly like an unknown Bot, and writes nothing", async () => {
      const before = await countChats();
      const unknown = await t.http().post('/v1/chats').set('authorization', bearer(b.secret)).send({ botId: UNKNOWN_ID });
      const answer = await t.http().post('/v1/chats').set('authorization', bearer(b.secret)).send({ botId: aBot });
      expectDeclared(answer, 404, 'BotNotFound');
      expect({ status: answer.status, body: answer.body as unknown }).toEqual({ status: unknown.status, body: unknown.body as unknown });
      expect(await countChats()).toBe(before);
    });

    it("[IDN-08] B's list never holds A's Chats, also filtered by A's Bot or paging from before A's IDs", async () => {
      for (const query of [{ after: '00000000-0000-7000-8000-000000000000' }, { botId: aBot }]) {
        const page = (await t.http().get('/v1/chats').query(query).set('authorization', bearer(b.secret)).expect(200)).body as Page;
        expect(page).toEqual({ data: [], next: null });
      }
      const aPage = (await t.http().get('/v1/chats').set('authorization', bearer(a.secret)).expect(200)).body as Page;
      expect(aPage.data.map((chat) => chat.id)).toEqual([aChat.id]);
    });

    it("[IDN-08] B cannot delete A's Bot that has Chats: 404 BotNotFound, not 409", async () => {
      expectDeclared(await t.http().delete(`/v1/bots/${aBot}`).set('authorization', bearer(b.secret)), 404, 'BotNotFound');
    });
  });
});

import { startTestApp, type TestApp } from '../support/test-app';

/**
 * IDN-08: list endpoints apply resource rules inside the database query, not after it. A list
 * that fetched a page and then dropped the rows of another organization would answer short or
 * empty pages while the caller's rows wait further on. So organization B writes more rows than a
 * page holds between each of A's rows, and A's pages must still be full pages of A's rows only,
 * in order, with the cursor leading to the rest; B's pages likewise.
 */

type Org = Awaited<ReturnType<TestApp['createOrganization']>>;

interface Page {
  data: Array<{ id: string }>;
  next: string | null;
}

const PAGE = 2;
/** B's rows between two of A's: more than a page. */
const BETWEEN = PAGE + 2;

describe('[IDN-08] list pages are cut after the access rule', () => {
  let t: TestApp;
  let a: Org;
  let b: Org;

  beforeAll(async () => {
    t = await startTestApp();
    a = await t.createOrganization('Pages A');
    b = await t.createOrganization('Pages B');
  });
  afterAll(async () => {
    await t?.close();
  });

  const bearer = (org: Org): string => `Bearer ${org.secret}`;

  /** Every page of a list with PAGE rows a page, following `next`. */
  async function pages(org: Org, path: string): Promise<string[][]> {
    const out: string[][] = [];
    let after: string | null = null;
    for (;;) {
      const query: Record<string, string | number> = after === null ? { limit: PAGE } : { limit: PAGE, after };
      const body = (await t.http().get(path).query(query).set('authorization', bearer(org)).expect(200)).body as Page;
      out.push(body.data.map((row) => row.id));
      if (body.next === null) return out;
      after = body.next;
      if (out.length > 50) throw new Error(`${path} pages without end`);
    }
  }

  /** What each list's rows are made of: `create` makes one row in the org and answers its ID. */
  const lists: Array<{ path: string; before: (org: Org) => string[]; create: (org: Org, n: number) => Promise<string> }> = [
    {
      path: '/v1/model-providers',
      before: () => [],
      create: async (org, n) =>
        ((await t.http().post('/v1/model-providers').set('authorization', bearer(org)).send({ name: `p${n}`, kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' }).expect(201)).body as { id: string }).id,
    },
    {
      path: '/v1/bots',
      before: () => [],
      create: async (org, n) => {
        if (n === 0) await t.http().post('/v1/model-providers').set('authorization', bearer(org)).send({ name: 'bots', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' }).expect(201);
        return ((await t.http().post('/v1/bots').set('authorization', bearer(org)).send({ name: `b${n}`, model: 'bots/m' }).expect(201)).body as { id: string }).id;
      },
    },
    {
      path: '/v1/chats',
      before: () => [],
      create: async (org, n) => {
        if (n === 0) {
          await t.http().post('/v1/model-providers').set('authorization', bearer(org)).send({ name: 'chats', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' }).expect(201);
          await t.http().post('/v1/bots').set('authorization', bearer(org)).send({ name: 'chats', model: 'chats/m' }).expect(201);
        }
        const [bot] = await t.database.query<{ id: string }>(`SELECT id FROM bots WHERE organization_id = $1 AND name = 'chats'`, [org.organizationId]);
        const botId = bot!.id;
        return ((await t.http().post('/v1/chats').set('authorization', bearer(org)).send({ botId }).expect(201)).body as { id: string }).id;
      },
    },
    {
      path: '/v1/vaults',
      before: () => [],
      create: async (org, n) => ((await t.http().post('/v1/vaults').set('authorization', bearer(org)).send({ name: `v${n}` }).expect(201)).body as { id: string }).id,
    },
    {
      path: '/v1/api-keys',
      before: (org) => [org.apiKeyId],
      create: async (org, n) => ((await t.http().post('/v1/api-keys').set('authorization', bearer(org)).send({ name: `k${n}` }).expect(201)).body as { id: string }).id,
    },
    {
      path: '/v1/members',
      before: (org) => [org.memberId],
      create: async (org, n) => ((await t.http().post('/v1/members').set('authorization', bearer(org)).send({ role: 'viewer', name: `m${n}` }).expect(201)).body as { member: { id: string } }).member.id,
    },
  ];

  it.each(lists.map((list) => [list.path, list] as const))(
    "[IDN-08] %s: with more than a page of B's rows between each two of A's, every page A reads is full of A's rows only, in order, and so are B's",
    async (_path, list) => {
      const mine: string[] = [...list.before(a)];
      const theirs: string[] = [...list.before(b)];
      let n = 0;
      for (let round = 0; round < 3; round++) {
        mine.push(await list.create(a, n));
        for (let i = 0; i < BETWEEN; i++) theirs.push(await list.create(b, n++));
      }
      const aPages = await pages(a, list.path);
      expect(aPages.flat()).toEqual(mine);
      // Every page but the last is a full page: none came back short because B's rows filled it.
      expect(aPages.slice(0, -1).every((page) => page.length === PAGE)).toBe(true);
      expect(aPages[0]).toEqual(mine.slice(0, PAGE));
      const bPages = await pages(b, list.path);
      expect(bPages.flat()).toEqual(theirs);
      expect(bPages.slice(0, -1).every((page) => page.length === PAGE)).toBe(true);
    },
  );

  it("[IDN-08] a member's memory list: more than a page of items the access rule hides from a viewer comes before the one it shows, and the viewer's first page is that one item", async () => {
    await t.http().post('/v1/model-providers').set('authorization', bearer(a)).send({ name: 'mem', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' }).expect(201);
    const bot = (await t.http().post('/v1/bots').set('authorization', bearer(a)).send({ name: 'mem', model: 'mem/m' }).expect(201)).body as { id: string };
    const viewer = (await t.http().post('/v1/members').set('authorization', bearer(a)).send({ role: 'viewer', name: 'reader' }).expect(201)).body as { apiKey: { secret: string } };
    const add = async (body: Record<string, unknown>): Promise<string> =>
      ((await t.http().post(`/v1/bots/${bot.id}/memories`).set('authorization', bearer(a)).send(body).expect(201)).body as { id: string }).id;
    const hidden: string[] = [];
    for (let i = 0; i < BETWEEN; i++) hidden.push(await add({ content: `Owner-only note ${i}`, access: { kind: 'members', ids: [a.memberId] } }));
    const shown = await add({ content: 'A note for everyone' });
    const asViewer = (await t.http().get(`/v1/bots/${bot.id}/memories`).query({ limit: PAGE }).set('authorization', `Bearer ${viewer.apiKey.secret}`).expect(200)).body as Page;
    expect(asViewer).toEqual({ data: [expect.objectContaining({ id: shown })], next: null });
    // The owner's pages hold them all, in order, pages full.
    const ownerPages = await pages(a, `/v1/bots/${bot.id}/memories`);
    expect(ownerPages.flat()).toEqual([...hidden, shown]);
    expect(ownerPages.slice(0, -1).every((page) => page.length === PAGE)).toBe(true);
  });
});

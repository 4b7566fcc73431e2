import { addProvider, expectDeclared, ISO, issuePaths, UNKNOWN_ID, UUID_V7 } from '../support/api-assertions';
import { bearer } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Bots of an organization (`/v1/bots`): created, read, listed, changed and deleted; their model
 * names one of the organization's model providers (`<provider name>/<model id>`), their tools
 * are validated field by field (an `http` or `background` tool needs a `url`, a `client` tool has
 * none), their Turn limits are shown with the defaults filled in, and other organizations never
 * see them (IDN-08).
 */

const BOT_FIELDS = ['createdAt', 'id', 'instructions', 'limits', 'memory', 'model', 'name', 'tools', 'updatedAt'];
const DEFAULT_LIMITS = { maxSteps: 16, maxSeconds: 900, maxOutputTokens: 200_000, maxCostMicros: null };

interface BotTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  kind?: 'client' | 'http' | 'background';
  url?: string;
  retry?: 'safe' | 'unsafe';
  approval?: 'never' | 'always' | { argument: string; in: unknown[] };
  approvalExpiresInSeconds?: number;
  approvers?: { roles?: string[]; members?: string[]; secondPerson?: boolean };
}
interface BotLimits {
  maxSteps: number;
  maxSeconds: number;
  maxOutputTokens: number;
}
interface BotBody {
  id: string;
  name: string;
  model: string;
  instructions: string;
  tools: BotTool[];
  limits: BotLimits;
  createdAt: string;
  updatedAt: string;
}
interface Page {
  data: BotBody[];
  next: string | null;
}

const WEATHER: BotTool = {
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const LOOKUP: BotTool = {
  name: 'lookup_order',
  description: 'An order by its number',
  parameters: { type: 'object', properties: { number: { type: 'string' } } },
  kind: 'http',
  url: 'https://tools.example.com/orders?v=2',
  retry: 'safe',
  approval: { argument: 'number', in: ['42', 42] },
  approvalExpiresInSeconds: 3600,
  approvers: { roles: ['member'], secondPerson: true },
};

/** A tool as the API shows it: a tool sent without a kind is a `client` tool. */
const shown = (tool: BotTool): BotTool => ({ kind: 'client', ...tool });

describe('bots', () => {
  let t: TestApp;
  let owner: Awaited<ReturnType<TestApp['createOrganization']>>;

  async function create(secret: string, body: Record<string, unknown>): Promise<BotBody> {
    const res = await t.http().post('/v1/bots').set('authorization', bearer(secret)).send(body);
    expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 201, body: expect.anything() });
    return res.body as BotBody;
  }

  async function countBots(): Promise<number> {
    const [row] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM bots');
    return row!.n;
  }

  beforeAll(async () => {
    t = await startTestApp();
    owner = await t.createOrganization('Bots Inc');
    await addProvider(t, owner.secret, 'local');
  });
  afterAll(async () => {
    await t.close();
  });

  it('POST /v1/bots answers 201 with every field, and GET reads it back', async () => {
    const res = await t
      .http()
      .post('/v1/bots')
      .set('authorization', bearer(owner.secret))
      .send({ name: '  Support  ', model: 'local/gpt-4o-mini', instructions: 'Be brief.', tools: [WEATHER] })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID_V7),
      name: 'Support',
      model: 'local/gpt-4o-mini',
      instructions: 'Be brief.',
      tools: [shown(WEATHER)],
      limits: DEFAULT_LIMITS,
      memory: { enabled: false, learn: false, learnAccess: 'member' },
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    const bot = res.body as BotBody;
    const read = await t.http().get(`/v1/bots/${bot.id}`).set('authorization', bearer(owner.secret)).expect(200);
    expect(read.body).toEqual(bot);
  });

  it('instructions and tools are optional; the model id may itself hold "/"', async () => {
    const bot = await create(owner.secret, { name: 'Plain', model: 'local/org/model:7b' });
    expect(bot).toEqual(expect.objectContaining({ model: 'local/org/model:7b', instructions: '', tools: [], limits: DEFAULT_LIMITS }));
    expect(Object.keys(bot).sort()).toEqual(BOT_FIELDS);
  });

  it('POST /v1/bots with http, background and client tools and limits echoes them, defaults filled in', async () => {
    const job: BotTool = { name: 'long_job', description: 'Runs a while', parameters: { type: 'object' }, kind: 'background', url: 'http://jobs.example.com:8080/run' };
    const plain: BotTool = { ...WEATHER, kind: 'client' };
    const res = await t
      .http()
      .post('/v1/bots')
      .set('authorization', bearer(owner.secret))
      .send({ name: 'Tooled', model: 'local/a', tools: [LOOKUP, WEATHER, job, plain].map((tool, i) => ({ ...tool, name: `${tool.name}_${i}` })), limits: { maxSteps: 5, maxOutputTokens: 1000 } })
      .expect(201);
    const bot = res.body as BotBody;
    expect(Object.keys(bot).sort()).toEqual(BOT_FIELDS);
    expect(bot.tools).toEqual([
      { ...LOOKUP, name: 'lookup_order_0' },
      { ...WEATHER, name: 'get_weather_1', kind: 'client' },
      { ...job, name: 'long_job_2' },
      { ...plain, name: 'get_weather_3' },
    ]);
    expect(bot.limits).toEqual({ maxSteps: 5, maxSeconds: 900, maxOutputTokens: 1000, maxCostMicros: null });
    const read = await t.http().get(`/v1/bots/${bot.id}`).set('authorization', bearer(owner.secret)).expect(200);
    expect(read.body).toEqual(bot);
  });

  it('the OpenAPI document describes the fields a Bot, its tools and its limits really have', async () => {
    type Schema = { $ref?: string; properties?: Record<string, Schema>; items?: Schema; required?: string[]; allOf?: Schema[] };
    type Operation = { responses: Record<string, { content: Record<string, { schema: Schema }> }> };
    type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };
    const doc = (await t.http().get('/openapi.json').expect(200)).body as Document;
    const resolve = (schema: Schema): Schema => {
      const ref = schema.$ref ?? schema.allOf?.[0]?.$ref;
      return ref === undefined ? schema : resolve(doc.components.schemas[ref.replace('#/components/schemas/', '')]!);
    };
    const botSchema = resolve(doc.paths['/v1/bots']!.post!.responses['201']!.content['application/json']!.schema);
    const toolSchema = resolve(botSchema.properties!.tools!.items!);
    const limitsSchema = resolve(botSchema.properties!.limits!);
    const bot = await create(owner.secret, { name: 'Documented', model: 'local/a', tools: [LOOKUP, WEATHER] });
    expect(Object.keys(botSchema.properties!).sort()).toEqual(Object.keys(bot).sort());
    // Every field of an http tool, the two only a delegate tool has, the Vault-referenced headers an http tool may have, and the three only an app tool has.
    expect(Object.keys(toolSchema.properties!).sort()).toEqual([...Object.keys(bot.tools[0]!), 'attached', 'botId', 'headers', 'connectionId', 'tools', 'declarations'].sort());
    // Only `kind` is on every entry: an app entry has no name, description or parameters of its own (its tools are its declarations); every other tool has them.
    expect([...(toolSchema.required ?? [])]).toEqual(['kind']);
    expect(Object.keys(bot.tools[1]!).sort()).toEqual(['description', 'kind', 'name', 'parameters']);
    expect(Object.keys(limitsSchema.properties!).sort()).toEqual(Object.keys(bot.limits).sort());
    expect([...(limitsSchema.required ?? [])].sort()).toEqual(Object.keys(bot.limits).sort());
  });

  it('each limit takes 1 and its maximum', async () => {
    const low = await create(owner.secret, { name: 'Low', model: 'local/a', limits: { maxSteps: 1, maxSeconds: 1, maxOutputTokens: 1 } });
    expect(low.limits).toEqual({ maxSteps: 1, maxSeconds: 1, maxOutputTokens: 1, maxCostMicros: null });
    const high = await create(owner.secret, { name: 'High', model: 'local/a', limits: { maxSteps: 100, maxSeconds: 86_400, maxOutputTokens: 10_000_000 } });
    expect(high.limits).toEqual({ maxSteps: 100, maxSeconds: 86_400, maxOutputTokens: 10_000_000, maxCostMicros: null });
    const empty = await create(owner.secret, { name: 'Empty', model: 'local/a', limits: {} });
    expect(empty.limits).toEqual(DEFAULT_LIMITS);
  });

  it('a tool stored without a kind is shown as a client tool', async () => {
    const bot = await create(owner.secret, { name: 'Legacy', model: 'local/a' });
    await t.database.query('UPDATE bots SET tools = $2::jsonb WHERE id = $1', [bot.id, JSON.stringify([WEATHER])]);
    const read = await t.http().get(`/v1/bots/${bot.id}`).set('authorization', bearer(owner.secret)).expect(200);
    expect((read.body as BotBody).tools).toEqual([shown(WEATHER)]);
  });

  it('PATCH limits replaces the whole limits object; other changes keep it', async () => {
    const bot = await create(owner.secret, { name: 'Limited', model: 'local/a', limits: { maxSteps: 5, maxSeconds: 60 } });
    expect(bot.limits).toEqual({ maxSteps: 5, maxSeconds: 60, maxOutputTokens: 200_000, maxCostMicros: null });
    const patch = async (body: Record<string, unknown>): Promise<BotBody> =>
      (await t.http().patch(`/v1/bots/${bot.id}`).set('authorization', bearer(owner.secret)).send(body).expect(200)).body as BotBody;
    expect((await patch({ limits: { maxOutputTokens: 1000 } })).limits).toEqual({ maxSteps: 16, maxSeconds: 900, maxOutputTokens: 1000, maxCostMicros: null });
    expect((await patch({ name: 'Still limited', tools: [LOOKUP] })).limits).toEqual({ maxSteps: 16, maxSeconds: 900, maxOutputTokens: 1000, maxCostMicros: null });
    expect((await patch({ limits: {} })).limits).toEqual(DEFAULT_LIMITS);
    const read = await t.http().get(`/v1/bots/${bot.id}`).set('authorization', bearer(owner.secret)).expect(200);
    expect(read.body).toEqual(expect.objectContaining({ name: 'Still limited', tools: [LOOKUP], limits: DEFAULT_LIMITS }));
  });

  it('the list is oldest first and paginates with after/limit', async () => {
    const org = await t.createOrganization('Paging Bots');
    await addProvider(t, org.secret, 'p');
    const names = ['b1', 'b2', 'b3', 'b4', 'b5'];
    for (const name of names) await create(org.secret, { name, model: 'p/m' });
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const query: Record<string, string | number> = { limit: 2 };
      if (after !== null) query.after = after;
      const page = (await t.http().get('/v1/bots').query(query).set('authorization', bearer(org.secret)).expect(200)).body as Page;
      expect(Object.keys(page).sort()).toEqual(['data', 'next']);
      expect(page.data.length).toBeLessThanOrEqual(2);
      for (const item of page.data) expect(Object.keys(item).sort()).toEqual(BOT_FIELDS);
      seen.push(...page.data.map((b) => b.name));
      after = page.next;
      pages += 1;
    } while (after !== null && pages < 10);
    expect(seen).toEqual(names);
    expect(pages).toBe(3);
    for (const [query, path] of [
      ['limit=0', 'limit'],
      ['after=garbage', 'after'],
    ]) {
      const res = await t.http().get(`/v1/bots?${query}`).set('authorization', bearer(org.secret));
      expectDeclared(res, 400, 'InvalidInput');
      expect(issuePaths(res)).toEqual([path]);
    }
  });

  it('PATCH changes only the fields sent, replaces the tool set, and moves updatedAt', async () => {
    await addProvider(t, owner.secret, 'other');
    const bot = await create(owner.secret, { name: 'Patchable', model: 'local/a', instructions: 'Old.', tools: [WEATHER] });
    const renamed = await t.http().patch(`/v1/bots/${bot.id}`).set('authorization', bearer(owner.secret)).send({ name: 'Renamed' }).expect(200);
    expect(renamed.body).toEqual({ ...bot, name: 'Renamed', updatedAt: expect.stringMatching(ISO) });
    expect(Date.parse((renamed.body as BotBody).updatedAt)).toBeGreaterThanOrEqual(Date.parse(bot.updatedAt));
    const tool: BotTool = { name: 'lookup-order', description: '', parameters: { type: 'object' } };
    const changed = await t
      .http()
      .patch(`/v1/bots/${bot.id}`)
      .set('authorization', bearer(owner.secret))
      .send({ model: 'other/b', instructions: 'New.', tools: [tool] })
      .expect(200);
    expect(changed.body).toEqual({ ...bot, name: 'Renamed', model: 'other/b', instructions: 'New.', tools: [shown(tool)], updatedAt: expect.stringMatching(ISO) });
    const cleared = await t.http().patch(`/v1/bots/${bot.id}`).set('authorization', bearer(owner.secret)).send({ tools: [] }).expect(200);
    expect((cleared.body as BotBody).tools).toEqual([]);
    const read = await t.http().get(`/v1/bots/${bot.id}`).set('authorization', bearer(owner.secret)).expect(200);
    expect(read.body).toEqual(cleared.body);
  });

  it('PATCH refuses an unknown provider, a malformed model and unknown fields with 400, and changes nothing', async () => {
    const bot = await create(owner.secret, { name: 'Stable', model: 'local/a' });
    for (const [body, path] of [
      [{ model: 'nowhere/a' }, 'model'],
      [{ model: 'no-slash' }, 'model'],
      [{ tools: [WEATHER, WEATHER] }, 'tools.1.name'],
      [{ tools: [[WEATHER]] }, 'tools'],
      [{ tools: [{ ...LOOKUP, url: undefined }] }, 'tools.0.url'],
      [{ tools: [{ ...WEATHER, retry: 'safe' }] }, 'tools.0.retry'],
      [{ limits: { maxSteps: 0 } }, 'limits.maxSteps'],
      [{ limits: { maxTurns: 3 } }, 'limits.maxTurns'],
      [{ limits: null }, 'limits'],
      [{ name: '' }, 'name'],
      [{ id: UNKNOWN_ID }, 'id'],
    ] as const) {
      const res = await t.http().patch(`/v1/bots/${bot.id}`).set('authorization', bearer(owner.secret)).send(body);
      expectDeclared(res, 400, 'InvalidInput');
      expect([...new Set(issuePaths(res))]).toEqual([path]);
    }
    const read = await t.http().get(`/v1/bots/${bot.id}`).set('authorization', bearer(owner.secret)).expect(200);
    expect(read.body).toEqual(bot);
  });

  it('DELETE answers 200 with the deleted Bot; afterwards it is gone', async () => {
    const bot = await create(owner.secret, { name: 'Doomed', model: 'local/a', tools: [WEATHER] });
    const res = await t.http().delete(`/v1/bots/${bot.id}`).set('authorization', bearer(owner.secret)).expect(200);
    expect(res.body).toEqual(bot);
    expectDeclared(await t.http().get(`/v1/bots/${bot.id}`).set('authorization', bearer(owner.secret)), 404, 'BotNotFound');
    expectDeclared(await t.http().delete(`/v1/bots/${bot.id}`).set('authorization', bearer(owner.secret)), 404, 'BotNotFound');
    expectDeclared(await t.http().patch(`/v1/bots/${bot.id}`).set('authorization', bearer(owner.secret)).send({ name: 'x' }), 404, 'BotNotFound');
  });

  it.each([['malformed', 'not-a-uuid'], ['unknown', UNKNOWN_ID]])('a %s id answers 404 BotNotFound on GET, PATCH and DELETE', async (_label, id) => {
    expectDeclared(await t.http().get(`/v1/bots/${id}`).set('authorization', bearer(owner.secret)), 404, 'BotNotFound');
    expectDeclared(await t.http().patch(`/v1/bots/${id}`).set('authorization', bearer(owner.secret)).send({ name: 'x' }), 404, 'BotNotFound');
    expectDeclared(await t.http().delete(`/v1/bots/${id}`).set('authorization', bearer(owner.secret)), 404, 'BotNotFound');
  });

  const tools = (count: number): BotTool[] => Array.from({ length: count }, (_, i) => ({ ...WEATHER, name: `t${i}` }));
  it.each([
    ['no name', { model: 'local/a' }, ['name']],
    ['a blank name', { name: '   ', model: 'local/a' }, ['name']],
    ['a name too long', { name: 'n'.repeat(201), model: 'local/a' }, ['name']],
    ['no model', { name: 'b' }, ['model']],
    ['a model without "/"', { name: 'b', model: 'local' }, ['model']],
    ['a model with an empty provider', { name: 'b', model: '/gpt' }, ['model']],
    ['a model with an empty model id', { name: 'b', model: 'local/' }, ['model']],
    ['a model of an unknown provider', { name: 'b', model: 'nowhere/gpt' }, ['model']],
    ['instructions too long', { name: 'b', model: 'local/a', instructions: 'i'.repeat(100_001) }, ['instructions']],
    ['tools that are no array', { name: 'b', model: 'local/a', tools: WEATHER }, ['tools']],
    ['more than 64 tools', { name: 'b', model: 'local/a', tools: tools(65) }, ['tools']],
    ['an array of arrays as tools', { name: 'b', model: 'local/a', tools: [[WEATHER]] }, ['tools']],
    ['a string as a tool', { name: 'b', model: 'local/a', tools: ['get_weather'] }, ['tools', 'tools.0']],
    ['a tool name with a space', { name: 'b', model: 'local/a', tools: [{ ...WEATHER, name: 'get weather' }] }, ['tools.0.name']],
    ['a tool name too long', { name: 'b', model: 'local/a', tools: [{ ...WEATHER, name: 'x'.repeat(65) }] }, ['tools.0.name']],
    ['a tool without a name', { name: 'b', model: 'local/a', tools: [{ description: 'd', parameters: {} }] }, ['tools.0.name']],
    ['a tool description too long', { name: 'b', model: 'local/a', tools: [WEATHER, { ...WEATHER, name: 'x', description: 'd'.repeat(1025) }] }, ['tools.1.description']],
    ['tool parameters that are no object', { name: 'b', model: 'local/a', tools: [{ ...WEATHER, parameters: [] }] }, ['tools.0.parameters']],
    ['an unknown field in a tool', { name: 'b', model: 'local/a', tools: [{ ...WEATHER, handler: 'x' }] }, ['tools.0.handler']],
    ['duplicate tool names', { name: 'b', model: 'local/a', tools: [WEATHER, { ...WEATHER, description: 'again' }] }, ['tools.1.name']],
    ['an unknown tool kind', { name: 'b', model: 'local/a', tools: [{ ...LOOKUP, kind: 'webhook' }] }, ['tools.0.kind']],
    ['a null tool kind', { name: 'b', model: 'local/a', tools: [{ ...WEATHER, kind: null }] }, ['tools.0.kind']],
    ['an unknown retry', { name: 'b', model: 'local/a', tools: [{ ...LOOKUP, retry: 'sometimes' }] }, ['tools.0.retry']],
    ['an http tool without a url', { name: 'b', model: 'local/a', tools: [{ ...LOOKUP, url: undefined }] }, ['tools.0.url']],
    ['a background tool without a url', { name: 'b', model: 'local/a', tools: [WEATHER, { ...LOOKUP, kind: 'background', url: undefined }] }, ['tools.1.url']],
    ['an http tool with a relative url', { name: 'b', model: 'local/a', tools: [{ ...LOOKUP, url: '/orders' }] }, ['tools.0.url']],
    ['an http tool with an ftp url', { name: 'b', model: 'local/a', tools: [{ ...LOOKUP, url: 'ftp://tools.example.com/x' }] }, ['tools.0.url']],
    ['an http tool with a url holding credentials', { name: 'b', model: 'local/a', tools: [{ ...LOOKUP, url: 'https://me:secret@tools.example.com/x' }] }, ['tools.0.url']],
    ['an http tool with a url holding a username', { name: 'b', model: 'local/a', tools: [{ ...LOOKUP, url: 'https://me@tools.example.com/x' }] }, ['tools.0.url']],
    ['an http tool with a url without "//"', { name: 'b', model: 'local/a', tools: [{ ...LOOKUP, url: 'https:tools.example.com' }] }, ['tools.0.url']],
    ['a tool url too long', { name: 'b', model: 'local/a', tools: [{ ...LOOKUP, url: `https://tools.example.com/${'x'.repeat(2030)}` }] }, ['tools.0.url']],
    ['a tool url that is no string', { name: 'b', model: 'local/a', tools: [{ ...LOOKUP, url: 7 }] }, ['tools.0.url']],
    ['a client tool with a url', { name: 'b', model: 'local/a', tools: [{ ...WEATHER, url: 'https://tools.example.com/x' }] }, ['tools.0.url']],
    ['an explicit client tool with a url', { name: 'b', model: 'local/a', tools: [{ ...WEATHER, kind: 'client', url: 'https://tools.example.com/x' }] }, ['tools.0.url']],
    ['a client tool with retry', { name: 'b', model: 'local/a', tools: [{ ...WEATHER, retry: 'safe' }] }, ['tools.0.retry']],
    ['maxSteps 0', { name: 'b', model: 'local/a', limits: { maxSteps: 0 } }, ['limits.maxSteps']],
    ['maxSteps 101', { name: 'b', model: 'local/a', limits: { maxSteps: 101 } }, ['limits.maxSteps']],
    ['a fractional maxSteps', { name: 'b', model: 'local/a', limits: { maxSteps: 1.5 } }, ['limits.maxSteps']],
    ['a maxSteps string', { name: 'b', model: 'local/a', limits: { maxSteps: '5' } }, ['limits.maxSteps']],
    ['a null maxSteps', { name: 'b', model: 'local/a', limits: { maxSteps: null } }, ['limits.maxSteps']],
    ['maxSeconds above a day', { name: 'b', model: 'local/a', limits: { maxSeconds: 86_401 } }, ['limits.maxSeconds']],
    ['a negative maxSeconds', { name: 'b', model: 'local/a', limits: { maxSeconds: -1 } }, ['limits.maxSeconds']],
    ['maxOutputTokens above 10 million', { name: 'b', model: 'local/a', limits: { maxOutputTokens: 10_000_001 } }, ['limits.maxOutputTokens']],
    ['an unknown limit', { name: 'b', model: 'local/a', limits: { maxSteps: 5, maxTurns: 3 } }, ['limits.maxTurns']],
    ['limits that are no object', { name: 'b', model: 'local/a', limits: 5 }, ['limits']],
    ['limits that are an array', { name: 'b', model: 'local/a', limits: [{ maxSteps: 5 }] }, ['limits']],
    ['null limits', { name: 'b', model: 'local/a', limits: null }, ['limits']],
    ['an unknown field', { name: 'b', model: 'local/a', organizationId: 'x' }, ['organizationId']],
  ])('[ERR-02] %s answers 400 InvalidInput naming exactly the field, and writes nothing', async (_label, body, paths) => {
    const before = await countBots();
    const res = await t.http().post('/v1/bots').set('authorization', bearer(owner.secret)).send(body);
    expectDeclared(res, 400, 'InvalidInput');
    expect([...new Set(issuePaths(res))]).toEqual(paths);
    expect(await countBots()).toBe(before);
  });

  it('exactly 64 tools are accepted', async () => {
    const bot = await create(owner.secret, { name: 'Toolbox', model: 'local/a', tools: tools(64) });
    expect(bot.tools).toHaveLength(64);
  });

  it('without a credential every route answers 401', async () => {
    expectDeclared(await t.http().get('/v1/bots'), 401, 'Unauthenticated');
    expectDeclared(await t.http().post('/v1/bots').send({ name: 'x', model: 'local/a' }), 401, 'Unauthenticated');
    expectDeclared(await t.http().get(`/v1/bots/${UNKNOWN_ID}`), 401, 'Unauthenticated');
    expectDeclared(await t.http().patch(`/v1/bots/${UNKNOWN_ID}`).send({ name: 'x' }), 401, 'Unauthenticated');
    expectDeclared(await t.http().delete(`/v1/bots/${UNKNOWN_ID}`), 401, 'Unauthenticated');
  });

  describe('[IDN-08] tenant isolation', () => {
    let a: Awaited<ReturnType<TestApp['createOrganization']>>;
    let b: Awaited<ReturnType<TestApp['createOrganization']>>;
    let aBot: BotBody;

    beforeAll(async () => {
      a = await t.createOrganization('Bots A');
      b = await t.createOrganization('Bots B');
      await addProvider(t, a.secret, 'a-only');
      await addProvider(t, b.secret, 'b-only');
      aBot = await create(a.secret, { name: 'A bot', model: 'a-only/m', tools: [WEATHER] });
    });

    it("[IDN-08] reading, changing or deleting A's Bot with B's key answers 404 exactly like an unknown id, and changes nothing", async () => {
      const unknown = await t.http().get(`/v1/bots/${UNKNOWN_ID}`).set('authorization', bearer(b.secret));
      const answers = [
        await t.http().get(`/v1/bots/${aBot.id}`).set('authorization', bearer(b.secret)),
        await t.http().patch(`/v1/bots/${aBot.id}`).set('authorization', bearer(b.secret)).send({ name: 'stolen', model: 'b-only/m' }),
        await t.http().delete(`/v1/bots/${aBot.id}`).set('authorization', bearer(b.secret)),
      ];
      for (const answer of answers) {
        expectDeclared(answer, 404, 'BotNotFound');
        expect({ status: answer.status, body: answer.body as unknown }).toEqual({ status: unknown.status, body: unknown.body as unknown });
      }
      const read = await t.http().get(`/v1/bots/${aBot.id}`).set('authorization', bearer(a.secret)).expect(200);
      expect(read.body).toEqual(aBot);
    });

    it("[IDN-08] B's list never holds A's Bots, also when paging from before A's IDs", async () => {
      const page = (await t.http().get('/v1/bots').query({ after: '00000000-0000-7000-8000-000000000000' }).set('authorization', bearer(b.secret)).expect(200)).body as Page;
      expect(page).toEqual({ data: [], next: null });
      const aPage = (await t.http().get('/v1/bots').set('authorization', bearer(a.secret)).expect(200)).body as Page;
      expect(aPage.data.map((bot) => bot.id)).toEqual([aBot.id]);
    });

    it("[IDN-08] another organization's model provider is an unknown provider (400 on model)", async () => {
      const created = await t.http().post('/v1/bots').set('authorization', bearer(b.secret)).send({ name: 'x', model: 'a-only/m' });
      expectDeclared(created, 400, 'InvalidInput');
      expect(issuePaths(created)).toEqual(['model']);
      const patched = await t.http().patch(`/v1/bots/${aBot.id}`).set('authorization', bearer(a.secret)).send({ model: 'b-only/m' });
      expectDeclared(patched, 400, 'InvalidInput');
      expect(issuePaths(patched)).toEqual(['model']);
    });
  });

  it('an explicit null for any Bot field is a 400 on that field, never a 500', async () => {
    const org = await t.createOrganization('Nulls');
    const auth = `Bearer ${org.secret}`;
    await addProvider(t, org.secret, 'p');
    const created = await t.http().post('/v1/bots').set('authorization', auth).send({ name: 'B', model: 'p/m' }).expect(201);
    const id = (created.body as { id: string }).id;
    for (const field of ['name', 'model', 'instructions', 'tools', 'limits']) {
      const patch = await t.http().patch(`/v1/bots/${id}`).set('authorization', auth).send({ [field]: null });
      expect({ field, status: patch.status, paths: issuePaths(patch)[0] }).toEqual({ field, status: 400, paths: field });
    }
    for (const field of ['instructions', 'tools']) {
      const post = await t.http().post('/v1/bots').set('authorization', auth).send({ name: 'B', model: 'p/m', [field]: null });
      expect({ field, status: post.status }).toEqual({ field, status: 400 });
    }
  });
});

import { SealedRecords } from '@openbot/platform';
import type { SealedRecordId } from '@openbot/domain';
import { Client } from 'pg';
import type { Response } from 'supertest';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { expectDeclared, issuePaths } from '../support/api-assertions';
import { bearer, eventsUntilEnd, type EventBody } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Where a Vault secret may be (FW-08, SEC-02): a full Turn whose model provider key and HTTP tool
 * header are Vault references sends both where they belong, and afterwards each secret is
 * searched for in every column of every table (as text and as bytes), every event, every log
 * line and every answer of the Turn: it is found only inside its sealed record.
 */

jest.setTimeout(120_000);

const PROVIDER_KEY = 'sk-VAULTED-provider-key-7f3a9c';
const TOOL_TOKEN = 'tok-VAULTED-tool-header-51be02';

describe('Vault secrets in a full Turn', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;
  let org: Awaited<ReturnType<TestApp['createOrganization']>>;
  const answers: string[] = [];

  /** Every answer the test reads is kept, to be searched afterwards. */
  async function kept(request: Promise<Response>): Promise<Response> {
    const res = await request;
    answers.push(`${JSON.stringify(res.headers)}\n${res.text}`);
    return res;
  }
  const as = () => bearer(org.secret);

  /**
   * Every column (schema.table.column) holding `needle`, as text or as bytes: one query per table,
   * each column tested on its own, all on one connection.
   */
  async function tablesHolding(needle: string): Promise<string[]> {
    const client = new Client({ connectionString: t.database.url });
    await client.connect();
    try {
      const { rows: columns } = await client.query<{ schema: string; name: string; column: string; type: string }>(
        `SELECT c.table_schema AS schema, c.table_name AS name, c.column_name AS column, c.data_type AS type
           FROM information_schema.columns c JOIN information_schema.tables tb ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name
          WHERE tb.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('pg_catalog', 'information_schema')`,
      );
      expect(columns.some((c) => c.name === 'vault_items')).toBe(true);
      const tables = new Map<string, typeof columns>();
      for (const c of columns) tables.set(`"${c.schema}"."${c.name}"`, [...(tables.get(`"${c.schema}"."${c.name}"`) ?? []), c]);
      const hits: string[] = [];
      for (const [table, own] of tables) {
        const tests = own.map((c, i) => {
          const condition =
            c.type === 'bytea'
              ? `position(convert_to($1, 'UTF8') IN t."${c.column}") > 0`
              : `strpos(t."${c.column}"::text, $1) > 0 OR strpos(t."${c.column}"::text, encode(convert_to($1, 'UTF8'), 'hex')) > 0 OR strpos(t."${c.column}"::text, encode(convert_to($1, 'UTF8'), 'base64')) > 0`;
          return `coalesce(bool_or(${condition}), false) AS c${i}`;
        });
        const { rows } = await client.query<Record<string, boolean>>(`SELECT ${tests.join(', ')} FROM ${table} t`, [needle]);
        own.forEach((c, i) => {
          if (rows[0]![`c${i}`] === true) hits.push(`${table}."${c.column}"`);
        });
      }
      return hits.sort();
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    t = await startTestApp();
    model = await FakeOpenAiServer.start();
    tools = await FakeToolServer.start();
    tools.fallback = jsonReply(200, { modelOutput: 'the weather is fine' });
    org = await t.createOrganization('Hygiene');
  });
  afterAll(async () => {
    await t?.close();
    await model?.close();
    await tools?.close();
  });

  it('[FW-08] [SEC-02] a full Turn sends each secret only where it belongs; afterwards it is in no table, event, log line or answer: only in its sealed record', async () => {
    const modelHost = new URL(model.baseUrl).host;
    const toolHost = new URL(tools.url()).host;
    const vault = await kept(t.http().post('/v1/vaults').set('authorization', as()).send({ name: 'hygiene' }).expect(201));
    const vaultId = (vault.body as { id: string }).id;
    const item = await kept(
      t
        .http()
        .post(`/v1/vaults/${vaultId}/items`)
        .set('authorization', as())
        .send({ name: 'hygiene-item', fields: { providerKey: PROVIDER_KEY, toolToken: TOOL_TOKEN }, allowedHosts: [modelHost, toolHost] })
        .expect(201),
    );
    const itemId = (item.body as { id: string }).id;

    // A provider's key reference must name a field of an item whose allowedHosts admit the base URL.
    const narrow = await kept(
      t.http().post(`/v1/vaults/${vaultId}/items`).set('authorization', as()).send({ name: 'narrow', fields: { k: PROVIDER_KEY }, allowedHosts: ['elsewhere.example.com'] }).expect(201),
    );
    const refused = await kept(
      t.http().post('/v1/model-providers').set('authorization', as()).send({ name: 'bad', kind: 'openai-compatible', baseUrl: model.baseUrl, apiKey: { vaultItemId: (narrow.body as { id: string }).id, field: 'k' } }),
    );
    expectDeclared(refused, 400, 'InvalidInput');
    expect(issuePaths(refused)).toEqual(['apiKey']);

    const provider = await kept(
      t.http().post('/v1/model-providers').set('authorization', as()).send({ name: 'vaulted', kind: 'openai-compatible', baseUrl: model.baseUrl, apiKey: { vaultItemId: itemId, field: 'providerKey' } }).expect(201),
    );
    expect((provider.body as { apiKey: unknown }).apiKey).toEqual({ vaultItemId: itemId, field: 'providerKey' });
    const bot = await kept(
      t
        .http()
        .post('/v1/bots')
        .set('authorization', as())
        .send({
          name: 'Hygienic',
          model: 'vaulted/gpt-test',
          tools: [{ name: 'weather', description: 'Weather', parameters: { type: 'object' }, kind: 'http', url: tools.url(), headers: { Authorization: { vaultItemId: itemId, field: 'toolToken', prefix: 'Bearer ' } } }],
        })
        .expect(201),
    );
    const botId = (bot.body as { id: string }).id;
    const chat = await kept(t.http().post('/v1/chats').set('authorization', as()).send({ botId }).expect(201));
    const chatId = (chat.body as { id: string }).id;

    model.enqueue(toolCallReply('c-weather', 'weather', ['{"city":"Oslo"}'], [3, 2]), textReply(['It is fine.'], [4, 3]));
    const admission = await kept(t.http().post(`/v1/chats/${chatId}/messages`).set('authorization', as()).send({ content: 'weather?' }).expect(202));
    const executionId = (admission.body as { executionId: string }).executionId;
    const events: EventBody[] = await eventsUntilEnd(t, org.secret, executionId);
    answers.push(JSON.stringify(events));
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });

    // Each secret went where it belongs, and only there.
    expect(model.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${PROVIDER_KEY}`, `Bearer ${PROVIDER_KEY}`]);
    expect(tools.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${TOOL_TOKEN}`]);
    expect(JSON.stringify(model.requests.map((r) => r.body))).not.toContain(TOOL_TOKEN);

    // Every answer a client could read about this Turn and its definitions.
    for (const path of [
      `/v1/bots/${botId}`,
      '/v1/bots',
      `/v1/model-providers/${(provider.body as { id: string }).id}`,
      '/v1/model-providers',
      `/v1/chats/${chatId}`,
      `/v1/chats/${chatId}/messages`,
      `/v1/executions/${executionId}`,
      `/v1/executions/${executionId}/events`,
      `/v1/vaults/${vaultId}/items`,
      `/v1/vaults/${vaultId}/items/${itemId}`,
      '/v1/usage',
    ]) {
      await kept(t.http().get(path).set('authorization', as()).expect(200));
    }

    for (const secret of [PROVIDER_KEY, TOOL_TOKEN]) {
      expect({ secret, tables: await tablesHolding(secret) }).toEqual({ secret, tables: [] });
      expect({ secret, logs: t.logs.filter((line) => line.includes(secret)) }).toEqual({ secret, logs: [] });
      expect({ secret, answers: answers.filter((answer) => answer.includes(secret)) }).toEqual({ secret, answers: [] });
    }
    // The search finds what is there: the item's name is a plain column (and the audit log names it); the values are in its sealed record.
    expect(await tablesHolding('hygiene-item')).toEqual(['"public"."audit_events"."details"', '"public"."vault_items"."name"']);
    const [record] = await t.database.query<{ id: string }>('SELECT fields_record_id AS id FROM vault_items WHERE id = $1', [itemId]);
    expect(await t.app.get(SealedRecords).get(record!.id as SealedRecordId)).toEqual({ purpose: 'vault-item.fields', value: { providerKey: PROVIDER_KEY, toolToken: TOOL_TOKEN } });
  });

  it('[SEC-02] a literal HTTP tool header is stored sealed and answered as null: sent at the call only, in no table, event, log line or answer but its sealed record; null keeps it, a new value replaces it', async () => {
    const LITERAL = 'lit-SEALED-tool-header-c0ffee';
    const REPLACED = 'lit-REPLACED-tool-header-beef01';
    const literalAnswers: string[] = [];
    const keep = async (request: Promise<Response>): Promise<Response> => {
      const res = await request;
      literalAnswers.push(`${JSON.stringify(res.headers)}\n${res.text}`);
      return res;
    };
    await t.http().post('/v1/model-providers').set('authorization', as()).send({ name: 'plain', kind: 'openai-compatible', baseUrl: model.baseUrl }).expect(201);
    const weather = (headers: Record<string, unknown>) => ({ name: 'weather', description: 'Weather', parameters: { type: 'object' }, kind: 'http', url: tools.url(), headers });
    const created = await keep(t.http().post('/v1/bots').set('authorization', as()).send({ name: 'Literal', model: 'plain/gpt-test', tools: [weather({ 'X-Api-Key': LITERAL, 'X-Team': 'research' })] }).expect(201));
    const botId = (created.body as { id: string }).id;
    expect((created.body as { tools: Array<{ headers: unknown }> }).tools[0]!.headers).toEqual({ 'X-Api-Key': null, 'X-Team': null });
    const [stored] = await t.database.query<{ record: string }>(`SELECT tools->0->>'headerSecrets' AS record FROM bots WHERE id = $1`, [botId]);
    expect(await t.app.get(SealedRecords).get(stored!.record as SealedRecordId)).toEqual({ purpose: `bot-tool.headers:${new URL(tools.baseUrl).origin}`, value: { 'X-Api-Key': LITERAL, 'X-Team': 'research' } });

    const chat = await keep(t.http().post('/v1/chats').set('authorization', as()).send({ botId }).expect(201));
    const chatId = (chat.body as { id: string }).id;
    const turn = async (): Promise<string> => {
      model.enqueue(toolCallReply('c-lit', 'weather', ['{"city":"Oslo"}'], [3, 2]), textReply(['Fine.'], [4, 3]));
      const admission = await keep(t.http().post(`/v1/chats/${chatId}/messages`).set('authorization', as()).send({ content: 'weather?' }).expect(202));
      const executionId = (admission.body as { executionId: string }).executionId;
      const events = await eventsUntilEnd(t, org.secret, executionId);
      literalAnswers.push(JSON.stringify(events));
      expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
      return executionId;
    };
    const first = await turn();
    expect(tools.requests.at(-1)!.headers['x-api-key']).toBe(LITERAL);
    expect(tools.requests.at(-1)!.headers['x-team']).toBe('research');
    for (const path of [`/v1/bots/${botId}`, '/v1/bots', `/v1/chats/${chatId}/messages`, `/v1/executions/${first}`, `/v1/executions/${first}/events`]) {
      await keep(t.http().get(path).set('authorization', as()).expect(200));
    }
    expect(await tablesHolding(LITERAL)).toEqual([]);
    expect(t.logs.filter((line) => line.includes(LITERAL))).toEqual([]);
    expect(literalAnswers.filter((answer) => answer.includes(LITERAL))).toEqual([]);

    // The answer given back (null) keeps the value: the record stays the same.
    await keep(t.http().patch(`/v1/bots/${botId}`).set('authorization', as()).send({ tools: [weather({ 'X-Api-Key': null, 'X-Team': null })] }).expect(200));
    const [kept1] = await t.database.query<{ record: string }>(`SELECT tools->0->>'headerSecrets' AS record FROM bots WHERE id = $1`, [botId]);
    expect(kept1!.record).toBe(stored!.record);
    // A null with nothing saved to keep is refused on its header.
    const nothing = await t.http().patch(`/v1/bots/${botId}`).set('authorization', as()).send({ tools: [weather({ 'X-Api-Key': null, 'X-Other': null })] });
    expect(issuePaths(nothing)).toEqual(['tools.0.headers.X-Other']);
    // A new value replaces it: a new record, the old one deleted, and the next call sends the new value.
    await keep(t.http().patch(`/v1/bots/${botId}`).set('authorization', as()).send({ tools: [weather({ 'X-Api-Key': REPLACED, 'X-Team': null })] }).expect(200));
    const [replaced] = await t.database.query<{ record: string }>(`SELECT tools->0->>'headerSecrets' AS record FROM bots WHERE id = $1`, [botId]);
    expect(replaced!.record).not.toBe(stored!.record);
    expect(await t.app.get(SealedRecords).get(stored!.record as SealedRecordId)).toBeNull();
    await turn();
    expect(tools.requests.at(-1)!.headers['x-api-key']).toBe(REPLACED);
    expect(tools.requests.at(-1)!.headers['x-team']).toBe('research');
    expect(await tablesHolding(REPLACED)).toEqual([]);
    expect(literalAnswers.filter((answer) => answer.includes(REPLACED))).toEqual([]);
    // A deleted Bot takes its sealed header values with it.
    const spare = await t.http().post('/v1/bots').set('authorization', as()).send({ name: 'Spare', model: 'plain/gpt-test', tools: [weather({ 'X-Api-Key': LITERAL })] }).expect(201);
    const [spareRecord] = await t.database.query<{ record: string }>(`SELECT tools->0->>'headerSecrets' AS record FROM bots WHERE id = $1`, [(spare.body as { id: string }).id]);
    await t.http().delete(`/v1/bots/${(spare.body as { id: string }).id}`).set('authorization', as()).expect(200);
    expect(await t.app.get(SealedRecords).get(spareRecord!.record as SealedRecordId)).toBeNull();
  });

  it('[SEC-02] a model provider whose key item was deleted fails the Turn with category forbidden, and the model server gets no request', async () => {
    const vault = await t.http().post('/v1/vaults').set('authorization', as()).send({ name: 'gone' }).expect(201);
    const vaultId = (vault.body as { id: string }).id;
    const item = await t
      .http()
      .post(`/v1/vaults/${vaultId}/items`)
      .set('authorization', as())
      .send({ name: 'key', fields: { key: PROVIDER_KEY }, allowedHosts: [new URL(model.baseUrl).host] })
      .expect(201);
    const itemId = (item.body as { id: string }).id;
    await t.http().post('/v1/model-providers').set('authorization', as()).send({ name: 'doomed', kind: 'openai-compatible', baseUrl: model.baseUrl, apiKey: { vaultItemId: itemId, field: 'key' } }).expect(201);
    const bot = await t.http().post('/v1/bots').set('authorization', as()).send({ name: 'Doomed', model: 'doomed/gpt-test' }).expect(201);
    const chat = await t.http().post('/v1/chats').set('authorization', as()).send({ botId: (bot.body as { id: string }).id }).expect(201);
    await t.http().delete(`/v1/vaults/${vaultId}/items/${itemId}`).set('authorization', as()).expect(200);
    const before = model.requests.length;
    const admission = await t.http().post(`/v1/chats/${(chat.body as { id: string }).id}/messages`).set('authorization', as()).send({ content: 'hello' }).expect(202);
    const events = await eventsUntilEnd(t, org.secret, (admission.body as { executionId: string }).executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'failed', category: 'forbidden', errorId: expect.any(String) });
    expect(model.requests.length).toBe(before);
  });
});

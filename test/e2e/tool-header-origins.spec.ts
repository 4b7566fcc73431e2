import { SealedRecords } from '@openbot/platform';
import type { SealedRecordId } from '@openbot/domain';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { expectDeclared, issuePaths } from '../support/api-assertions';
import { addMember, bearer, eventsUntilEnd, sendMessage, type EventBody } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * A sealed literal tool header goes only to the origin it was saved for (decision 068, SEC-02):
 * a `null` ("keep") survives a change of the tool's URL path, never a change of its kind or URL
 * origin; the record itself is bound to the origin in its associated data, so even a row changed
 * behind the API's back does not open it for another host. Records sealed before decision 068
 * open once and are bound to the origin that opened them.
 */

jest.setTimeout(120_000);

const SECRET = 'lit-OWNER-tool-secret-9a1f55';

describe('literal tool headers stay with their origin', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;
  /** The owner's tool endpoint. */
  let owner: FakeToolServer;
  /** An endpoint of the member who edits the Bot: a capture server on another port (another origin). */
  let attacker: FakeToolServer;
  let org: Awaited<ReturnType<TestApp['createOrganization']>>;
  let member: { memberId: string; secret: string };
  let calls = 0;

  beforeAll(async () => {
    t = await startTestApp();
    model = await FakeOpenAiServer.start();
    owner = await FakeToolServer.start();
    attacker = await FakeToolServer.start();
    owner.fallback = jsonReply(200, { modelOutput: 'owner answered' });
    attacker.fallback = jsonReply(200, { modelOutput: 'attacker answered' });
    org = await t.createOrganization('Origins');
    member = await addMember(t, org.organizationId, 'member');
    await t.http().post('/v1/model-providers').set('authorization', bearer(org.secret)).send({ name: 'fake', kind: 'openai-compatible', baseUrl: model.baseUrl }).expect(201);
  });
  afterAll(async () => {
    await Promise.all([model?.close(), owner?.close(), attacker?.close()]);
    await t?.close();
  });

  const tool = (url: string, headers: Record<string, unknown>, kind = 'http') => ({ name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind, url, headers });
  const patchTools = (secret: string, botId: string, tools: unknown[]) => t.http().patch(`/v1/bots/${botId}`).set('authorization', bearer(secret)).send({ tools });
  const recordOf = async (botId: string): Promise<string> =>
    (await t.database.query<{ record: string }>(`SELECT tools->0->>'headerSecrets' AS record FROM bots WHERE id = $1`, [botId]))[0]!.record;
  const purposeOf = async (record: string): Promise<string | undefined> => (await t.database.query<{ purpose: string }>('SELECT purpose FROM sealed_records WHERE id = $1', [record]))[0]?.purpose;

  async function ownersBot(tools: unknown[]): Promise<{ botId: string; chatId: string }> {
    const bot = await t.http().post('/v1/bots').set('authorization', bearer(org.secret)).send({ name: `Bot ${++calls}`, model: 'fake/gpt-test', tools }).expect(201);
    const botId = (bot.body as { id: string }).id;
    const chat = await t.http().post('/v1/chats').set('authorization', bearer(member.secret)).send({ botId }).expect(201);
    return { botId, chatId: (chat.body as { id: string }).id };
  }

  /** One Turn of the member in which the model calls the tool once, then answers; its events. */
  async function turnCallingTool(chatId: string): Promise<EventBody[]> {
    model.enqueue(toolCallReply(`c${++calls}`, 'lookup', ['{}'], [1, 1]), textReply(['done'], [1, 1]));
    const admission = await sendMessage(t, member.secret, chatId, 'look it up');
    const events = await eventsUntilEnd(t, member.secret, admission.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    return events;
  }

  const secretReached = (server: FakeToolServer): boolean => JSON.stringify(server.requests).includes(SECRET);

  it("[SEC-02] a member who points an http tool at their own origin with the owner's literal header as null gets 400 on that header; the path alone may change, and the value given again goes to the new origin", async () => {
    const { botId, chatId } = await ownersBot([tool(owner.url('/lookup'), { 'X-Api-Key': SECRET, 'X-Team': 'research' })]);
    const saved = await recordOf(botId);

    // The attack: the member keeps the header (null) and moves the tool to their own host.
    const moved = await patchTools(member.secret, botId, [tool(attacker.url('/steal'), { 'X-Api-Key': null, 'X-Team': null })]);
    expectDeclared(moved, 400, 'InvalidInput');
    expect(issuePaths(moved)).toEqual(['tools.0.headers.X-Api-Key', 'tools.0.headers.X-Team']);
    // Another scheme or port is another origin as well.
    const otherPort = new URL(owner.url('/lookup'));
    otherPort.port = String(Number(otherPort.port) === 65_535 ? 1 : Number(otherPort.port) + 1);
    expect(issuePaths(await patchTools(member.secret, botId, [tool(otherPort.toString(), { 'X-Api-Key': null, 'X-Team': null })]))).toEqual(['tools.0.headers.X-Api-Key', 'tools.0.headers.X-Team']);
    // So is another kind of tool at the same URL.
    expect(issuePaths(await patchTools(member.secret, botId, [tool(owner.url('/lookup'), { 'X-Api-Key': null, 'X-Team': null }, 'background')]))).toEqual([
      'tools.0.headers.X-Api-Key',
      'tools.0.headers.X-Team',
    ]);
    // Nothing was changed: the Bot keeps its tool and its record (bound to the owner's origin), and a Turn sends the value to the owner's host only.
    expect(await recordOf(botId)).toBe(saved);
    expect(await purposeOf(saved)).toBe(`bot-tool.headers:${new URL(owner.baseUrl).origin}`);
    await turnCallingTool(chatId);
    expect(owner.requests.at(-1)!.headers['x-api-key']).toBe(SECRET);
    expect(attacker.requests).toHaveLength(0);

    // The same origin, another path: the value is kept, in the same record.
    await patchTools(member.secret, botId, [tool(owner.url('/lookup/v2'), { 'X-Api-Key': null, 'X-Team': null })]).expect(200);
    expect(await recordOf(botId)).toBe(saved);
    await turnCallingTool(chatId);
    expect(owner.requests.at(-1)!.path).toBe('/lookup/v2');
    expect(owner.requests.at(-1)!.headers['x-api-key']).toBe(SECRET);

    // Another origin with the values given again: the member's own values go there, in a new record bound to it.
    await patchTools(member.secret, botId, [tool(attacker.url('/mine'), { 'X-Api-Key': 'members-own-key', 'X-Team': 'research' })]).expect(200);
    const mine = await recordOf(botId);
    expect(mine).not.toBe(saved);
    expect(await purposeOf(saved)).toBeUndefined();
    expect(await purposeOf(mine)).toBe(`bot-tool.headers:${new URL(attacker.baseUrl).origin}`);
    await turnCallingTool(chatId);
    expect(attacker.requests.at(-1)!.headers['x-api-key']).toBe('members-own-key');
    expect(secretReached(attacker)).toBe(false);
  });

  it('[SEC-02] a background tool keeps its literal header only at its origin too', async () => {
    const { botId } = await ownersBot([tool(owner.url('/report'), { 'X-Api-Key': SECRET }, 'background')]);
    const moved = await patchTools(member.secret, botId, [tool(attacker.url('/steal'), { 'X-Api-Key': null }, 'background')]);
    expectDeclared(moved, 400, 'InvalidInput');
    expect(issuePaths(moved)).toEqual(['tools.0.headers.X-Api-Key']);
    expect(issuePaths(await patchTools(member.secret, botId, [tool(owner.url('/report'), { 'X-Api-Key': null }, 'http')]))).toEqual(['tools.0.headers.X-Api-Key']);
    const saved = await recordOf(botId);
    await patchTools(member.secret, botId, [tool(owner.url('/report/v2'), { 'X-Api-Key': null }, 'background')]).expect(200);
    expect(await recordOf(botId)).toBe(saved);
  });

  it('[SEC-02] the record opens only for its origin: a tool URL changed behind the API (no check at all) sends nothing, and the Turn goes on with a forbidden result', async () => {
    const { botId, chatId } = await ownersBot([tool(owner.url('/lookup'), { 'X-Api-Key': SECRET })]);
    const record = await recordOf(botId);
    // As if some code path forgot the check: the stored URL moves, the record stays.
    await t.database.query(`UPDATE bots SET tools = jsonb_set(tools, '{0,url}', to_jsonb($2::text)) WHERE id = $1`, [botId, attacker.url('/steal')]);
    const before = attacker.requests.length;
    const events = await turnCallingTool(chatId);
    expect(attacker.requests.length).toBe(before);
    expect(secretReached(attacker)).toBe(false);
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ isError: true, category: 'forbidden', errorId: expect.any(String) });
    // The record is still there, bound to the owner's origin: opened by its own purpose only.
    const sealed = t.app.get(SealedRecords);
    expect(await sealed.getAs(record, [`bot-tool.headers:${new URL(attacker.baseUrl).origin}`])).toBeNull();
    expect(await sealed.getAs(record, [`bot-tool.headers:${new URL(owner.baseUrl).origin}`])).toEqual({ purpose: `bot-tool.headers:${new URL(owner.baseUrl).origin}`, value: { 'X-Api-Key': SECRET } });
    // A row whose purpose is rewritten to another origin does not open either: the purpose is in the associated data.
    await t.database.query('UPDATE sealed_records SET purpose = $2 WHERE id = $1', [record, `bot-tool.headers:${new URL(attacker.baseUrl).origin}`]);
    await expect(sealed.getAs(record, [`bot-tool.headers:${new URL(attacker.baseUrl).origin}`])).rejects.toThrow(/cannot be opened/);
  });

  it('[SEC-02] a record sealed before origins were bound opens once, for the origin that asks first, and from then on for that origin only', async () => {
    const { botId, chatId } = await ownersBot([tool(owner.url('/lookup'), { 'X-Api-Key': 'placeholder' })]);
    // A record as decision 036 sealed it (no origin in its purpose), named by the tool.
    const sealed = t.app.get(SealedRecords);
    const legacy = await sealed.put('bot-tool.headers', { 'X-Api-Key': SECRET });
    await t.database.query(`UPDATE bots SET tools = jsonb_set(tools, '{0,headerSecrets}', to_jsonb($2::text)) WHERE id = $1`, [botId, legacy]);

    // Moving it to another origin through the API is refused like any other: it is not opened for that.
    expect(issuePaths(await patchTools(member.secret, botId, [tool(attacker.url('/steal'), { 'X-Api-Key': null })]))).toEqual(['tools.0.headers.X-Api-Key']);
    expect(await purposeOf(legacy)).toBe('bot-tool.headers');

    // The first send opens it and binds it, in place, to the owner's origin.
    await turnCallingTool(chatId);
    expect(owner.requests.at(-1)!.headers['x-api-key']).toBe(SECRET);
    expect(await recordOf(botId)).toBe(legacy);
    expect(await purposeOf(legacy)).toBe(`bot-tool.headers:${new URL(owner.baseUrl).origin}`);
    expect(await sealed.get(legacy as SealedRecordId)).toEqual({ purpose: `bot-tool.headers:${new URL(owner.baseUrl).origin}`, value: { 'X-Api-Key': SECRET } });

    // Now bound: a URL moved behind the API gets nothing.
    await t.database.query(`UPDATE bots SET tools = jsonb_set(tools, '{0,url}', to_jsonb($2::text)) WHERE id = $1`, [botId, attacker.url('/steal')]);
    const events = await turnCallingTool(chatId);
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ isError: true, category: 'forbidden' });
    expect(secretReached(attacker)).toBe(false);
  });
});

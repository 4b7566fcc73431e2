import { Engine } from '@openbot/engine';
import type { ServerResponse } from 'node:http';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { expectDeclared, issuePaths } from '../support/api-assertions';
import { addMember, bearer, eventsUntilEnd, sendMessage, type EventBody } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Vault references in HTTP tool headers (SEC-02, FW-08, IDN-06): bound to the item's ID, checked
 * when the Bot is saved and again before every send (rights, field, allowedHosts), opened only at
 * the send, and never carried to a host the item does not allow. Each test has its own fake
 * model and tool servers, so no scripted reply or recorded request leaks into the next.
 */

jest.setTimeout(120_000);

const PARAMS = { type: 'object', properties: { q: { type: 'string' } } };

interface Org {
  organizationId: string;
  memberId: string;
  apiKeyId: string;
  secret: string;
}

describe('Vault references in HTTP tool headers', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;
  let attacker: FakeToolServer;
  let org: Org;
  let counter = 0;

  const auth = (secret: string) => bearer(secret);
  const hostOf = (server: FakeToolServer): string => new URL(server.url()).host;

  async function vaultItem(secret: string, fields: Record<string, string>, allowedHosts: string[], name = `item-${++counter}`): Promise<{ vaultId: string; itemId: string }> {
    const vault = await t.http().post('/v1/vaults').set('authorization', auth(secret)).send({ name: `vault-${++counter}` }).expect(201);
    const vaultId = (vault.body as { id: string }).id;
    const item = await t.http().post(`/v1/vaults/${vaultId}/items`).set('authorization', auth(secret)).send({ name, fields, allowedHosts }).expect(201);
    return { vaultId, itemId: (item.body as { id: string }).id };
  }

  function httpTool(url: string, headers: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    return { name: 'lookup', description: 'Looks up', parameters: PARAMS, kind: 'http', url, headers, ...extra };
  }

  async function bot(secret: string, tool: Record<string, unknown>): Promise<string> {
    const res = await t.http().post('/v1/bots').set('authorization', auth(secret)).send({ name: 'Vaulted', model: 'fake/gpt-test', tools: [tool] });
    expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 201, body: expect.anything() });
    return (res.body as { id: string }).id;
  }

  async function chat(secret: string, botId: string): Promise<string> {
    return ((await t.http().post('/v1/chats').set('authorization', auth(secret)).send({ botId }).expect(201)).body as { id: string }).id;
  }

  /** One Turn in which the model calls the tool once, then answers; its events. */
  async function turnCallingTool(secret: string, chatId: string): Promise<EventBody[]> {
    model.enqueue(toolCallReply(`c${++counter}`, 'lookup', ['{"q":"x"}'], [1, 1]), textReply(['done'], [1, 1]));
    const admission = await sendMessage(t, secret, chatId, 'look it up');
    return eventsUntilEnd(t, secret, admission.executionId);
  }

  function toolResult(events: readonly EventBody[]): EventBody {
    const result = events.find((e) => e.type === 'tool.result');
    if (result === undefined) throw new Error(`no tool.result in ${events.map((e) => e.type).join(', ')}`);
    return result;
  }

  /** Every request any fake received, as one text: where a leaked secret would show. */
  function everythingReceived(): string {
    return JSON.stringify([tools.requests, attacker.requests, model.requests]);
  }

  /** Replies held at the tool server: let go after each test, so a failed test never hangs the close. */
  const held: Array<() => void> = [];
  function holdReply(): () => void {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    held.push(release);
    tools.enqueue(async (res: ServerResponse) => {
      await released;
      res.writeHead(503).end();
    });
    return release;
  }

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    model = await FakeOpenAiServer.start();
    tools = await FakeToolServer.start();
    attacker = await FakeToolServer.start();
    tools.fallback = jsonReply(200, { modelOutput: 'found' });
    attacker.fallback = jsonReply(200, { modelOutput: 'stolen' });
    model.fallback = textReply(['ok'], [1, 1]);
    org = await t.createOrganization(`Vault References ${++counter}`);
    await t.http().post('/v1/model-providers').set('authorization', auth(org.secret)).send({ name: 'fake', kind: 'openai-compatible', baseUrl: model.baseUrl }).expect(201);
  });
  afterEach(async () => {
    for (const release of held.splice(0)) release();
    await Promise.all([model.close(), tools.close(), attacker.close()]);
  });

  it('[SEC-02] a reference survives a rename of its item but not a delete-and-recreate with the same name', async () => {
    const first = 'tok-FIRST-0001-secret';
    const second = 'tok-SECOND-0002-secret';
    const { vaultId, itemId } = await vaultItem(org.secret, { token: first }, [hostOf(tools)], 'api');
    const botId = await bot(org.secret, httpTool(tools.url(), { Authorization: { vaultItemId: itemId, field: 'token', prefix: 'Bearer ' } }));
    // The Bot answers the reference as given, never a value.
    const saved = await t.http().get(`/v1/bots/${botId}`).set('authorization', auth(org.secret)).expect(200);
    expect((saved.body as { tools: Array<{ headers: unknown }> }).tools[0]!.headers).toEqual({ Authorization: { vaultItemId: itemId, field: 'token', prefix: 'Bearer ' } });
    const chatId = await chat(org.secret, botId);

    await turnCallingTool(org.secret, chatId);
    expect(tools.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${first}`]);

    // Renamed: the ID stays, and so does the reference.
    await t.http().patch(`/v1/vaults/${vaultId}/items/${itemId}`).set('authorization', auth(org.secret)).send({ name: 'api-renamed' }).expect(200);
    await turnCallingTool(org.secret, chatId);
    expect(tools.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${first}`, `Bearer ${first}`]);

    // Deleted and created again under the old name: another ID, which never replaces the saved reference.
    await t.http().delete(`/v1/vaults/${vaultId}/items/${itemId}`).set('authorization', auth(org.secret)).expect(200);
    await t.http().post(`/v1/vaults/${vaultId}/items`).set('authorization', auth(org.secret)).send({ name: 'api-renamed', fields: { token: second }, allowedHosts: [hostOf(tools)] }).expect(201);
    const events = await turnCallingTool(org.secret, chatId);
    expect(tools.requests).toHaveLength(2);
    expect(everythingReceived()).not.toContain(second);
    // The call gets an error result naming the category and an error ID; the Turn goes on and completes.
    const result = toolResult(events);
    expect(result).toMatchObject({ isError: true, category: 'forbidden', errorId: expect.any(String) });
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    const toolMessage = (model.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> }).messages.filter((m) => m.role === 'tool').at(-1)!;
    expect(toolMessage.content).toContain('category forbidden');
    expect(toolMessage.content).toContain(result.errorId as string);
  });

  it("[SEC-02] a member's Bot naming an admin's item without vaults.use, or for a host outside allowedHosts, gets nothing: the server it chose receives no request carrying the secret", async () => {
    const secret = 'admin-ONLY-secret-9999';
    const member = await addMember(t, org.organizationId, 'member');
    const { vaultId, itemId } = await vaultItem(org.secret, { token: secret }, [hostOf(tools)]);
    const reference = { 'X-Api-Key': { vaultItemId: itemId, field: 'token' } };

    // Saving: without vaults.use on the Vault the member may not name the reference at all…
    const noRight = await t.http().post('/v1/bots').set('authorization', auth(member.secret)).send({ name: 'Mine', model: 'fake/gpt-test', tools: [httpTool(attacker.url(), reference)] });
    expectDeclared(noRight, 403, 'Forbidden');
    const noRightAllowedHost = await t.http().post('/v1/bots').set('authorization', auth(member.secret)).send({ name: 'Mine', model: 'fake/gpt-test', tools: [httpTool(tools.url(), reference)] });
    expectDeclared(noRightAllowedHost, 403, 'Forbidden');
    // …and with it, not for a host outside the item's allowedHosts; an unknown field or item is 400 too.
    await t.http().put(`/v1/vaults/${vaultId}/users`).set('authorization', auth(org.secret)).send({ memberIds: [member.memberId] }).expect(200);
    const outside = await t.http().post('/v1/bots').set('authorization', auth(member.secret)).send({ name: 'Mine', model: 'fake/gpt-test', tools: [httpTool(attacker.url(), reference)] });
    expectDeclared(outside, 400, 'InvalidInput');
    expect(issuePaths(outside)).toEqual(['tools.0.headers.X-Api-Key']);
    const badField = await t.http().post('/v1/bots').set('authorization', auth(member.secret)).send({ name: 'Mine', model: 'fake/gpt-test', tools: [httpTool(tools.url(), { 'X-Api-Key': { vaultItemId: itemId, field: 'nope' } })] });
    expect(issuePaths(badField)).toEqual(['tools.0.headers.X-Api-Key.field']);
    // A literal is the member's own value (stored sealed); one that cannot be a header is refused.
    const literal = await t.http().post('/v1/bots').set('authorization', auth(member.secret)).send({ name: 'Mine', model: 'fake/gpt-test', tools: [httpTool(tools.url(), { 'X-Api-Key': `${secret}\r\nX-Injected: 1` })] });
    expect(issuePaths(literal)).toEqual(['tools.0.headers.X-Api-Key']);

    // Saved while allowed, to the allowed host; then pointed at the member's own server: refused.
    const botId = await bot(member.secret, httpTool(tools.url(), reference));
    const moved = await t.http().patch(`/v1/bots/${botId}`).set('authorization', auth(member.secret)).send({ tools: [httpTool(attacker.url(), reference)] });
    expectDeclared(moved, 400, 'InvalidInput');
    const chatId = await chat(member.secret, botId);

    // Before each send, again: the grant revoked, the member's Turn sends nothing.
    await t.http().put(`/v1/vaults/${vaultId}/users`).set('authorization', auth(org.secret)).send({ memberIds: [] }).expect(200);
    const revoked = await turnCallingTool(member.secret, chatId);
    expect(toolResult(revoked)).toMatchObject({ isError: true, category: 'forbidden' });
    // Granted again, but the admin narrowed allowedHosts away from the tool's host: nothing either.
    await t.http().put(`/v1/vaults/${vaultId}/users`).set('authorization', auth(org.secret)).send({ memberIds: [member.memberId] }).expect(200);
    await t.http().patch(`/v1/vaults/${vaultId}/items/${itemId}`).set('authorization', auth(org.secret)).send({ allowedHosts: ['elsewhere.example.com'] }).expect(200);
    const narrowed = await turnCallingTool(member.secret, chatId);
    expect(toolResult(narrowed)).toMatchObject({ isError: true, category: 'forbidden' });
    expect(tools.requests).toHaveLength(0);

    // The member's Turn on the admin's own Bot: the member's rights are what count at the send.
    await t.http().patch(`/v1/vaults/${vaultId}/items/${itemId}`).set('authorization', auth(org.secret)).send({ allowedHosts: [hostOf(tools)] }).expect(200);
    await t.http().put(`/v1/vaults/${vaultId}/users`).set('authorization', auth(org.secret)).send({ memberIds: [] }).expect(200);
    const adminBot = await bot(org.secret, httpTool(tools.url(), reference));
    const onAdminBot = await turnCallingTool(member.secret, await chat(member.secret, adminBot));
    expect(toolResult(onAdminBot)).toMatchObject({ isError: true, category: 'forbidden' });
    expect(tools.requests).toHaveLength(0);
    // The admin's own Turn on it sends, to the allowed host only.
    await turnCallingTool(org.secret, await chat(org.secret, adminBot));
    expect(tools.requests.map((r) => r.headers['x-api-key'])).toEqual([secret]);
    expect(attacker.requests).toHaveLength(0);
    expect(JSON.stringify(attacker.requests)).not.toContain(secret);
  });

  it('[SEC-02] an item changed while a call is in flight: each send uses the fields as they were at its re-check, never a mixture; deleted, the next send fails forbidden', async () => {
    const { vaultId, itemId } = await vaultItem(org.secret, { user: 'user-OLD', pass: 'pass-OLD' }, [hostOf(tools)]);
    const botId = await bot(
      org.secret,
      httpTool(tools.url(), { 'X-User': { vaultItemId: itemId, field: 'user' }, 'X-Pass': { vaultItemId: itemId, field: 'pass' } }, { retry: 'safe' }),
    );
    const chatId = await chat(org.secret, botId);
    // The first attempt is held at the server while the item changes, then answers 503: the retry is a new send.
    const release = holdReply();
    model.enqueue(toolCallReply('c-flight', 'lookup', ['{}'], [1, 1]), textReply(['done'], [1, 1]));
    const admission = await sendMessage(t, org.secret, chatId, 'go');
    await tools.waitForRequests(1);
    await t.http().put(`/v1/vaults/${vaultId}/items/${itemId}`).set('authorization', auth(org.secret)).send({ fields: { user: 'user-NEW', pass: 'pass-NEW' } }).expect(200);
    release();
    const events = await eventsUntilEnd(t, org.secret, admission.executionId, 60_000);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(tools.requests.map((r) => [r.headers['x-user'], r.headers['x-pass']])).toEqual([
      ['user-OLD', 'pass-OLD'],
      ['user-NEW', 'pass-NEW'],
    ]);

    // Deleted while the first attempt is in flight: the retry re-checks, finds nothing, sends nothing.
    const release2 = holdReply();
    model.enqueue(toolCallReply('c-flight-2', 'lookup', ['{}'], [1, 1]), textReply(['done'], [1, 1]));
    const second = await sendMessage(t, org.secret, chatId, 'again');
    await tools.waitForRequests(3);
    await t.http().delete(`/v1/vaults/${vaultId}/items/${itemId}`).set('authorization', auth(org.secret)).expect(200);
    release2();
    const after = await eventsUntilEnd(t, org.secret, second.executionId, 60_000);
    expect(toolResult(after)).toMatchObject({ isError: true, category: 'forbidden' });
    expect(tools.requests).toHaveLength(3);
  });

  it('[SEC-02] a background tool carries its header reference too: opened in its own execution, against the Turn\'s member', async () => {
    const secret = 'background-SECRET-value';
    const { itemId } = await vaultItem(org.secret, { token: secret }, [hostOf(tools)]);
    const botId = await bot(org.secret, { ...httpTool(tools.url(), { 'X-Api-Key': { vaultItemId: itemId, field: 'token' } }), kind: 'background' });
    const events = await turnCallingTool(org.secret, await chat(org.secret, botId));
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(tools.requests.map((r) => r.headers['x-api-key'])).toEqual([secret]);
    expect(JSON.stringify(events)).not.toContain(secret);
  });

  it('[IDN-06] a call that waited for its secret checks the Turn\'s identity again before sending: revoked meanwhile, nothing is sent', async () => {
    const secret = 'idn06-SECRET-value';
    const member = await addMember(t, org.organizationId, 'member');
    const { vaultId, itemId } = await vaultItem(org.secret, { token: secret }, [hostOf(tools)]);
    await t.http().put(`/v1/vaults/${vaultId}/users`).set('authorization', auth(org.secret)).send({ memberIds: [member.memberId] }).expect(200);
    const botId = await bot(member.secret, httpTool(tools.url(), { 'X-Api-Key': { vaultItemId: itemId, field: 'token' } }));
    const chatId = await chat(member.secret, botId);
    // The call log's own identity check has passed; the key is revoked while the call reads its secret.
    t.app.get(Engine).faults.arm(
      'call.sending.committed',
      { kind: 'call', run: async () => void (await t.database.query(`UPDATE api_keys SET revoked_at = now() WHERE member_id = $1`, [member.memberId])) },
      { when: (c) => c.callKey?.endsWith(':tool:c-idn06') === true },
    );
    model.enqueue(toolCallReply('c-idn06', 'lookup', ['{}'], [1, 1]), textReply(['done'], [1, 1]));
    const admission = await sendMessage(t, member.secret, chatId, 'go');
    // The member's key is revoked: read the events as the owner.
    const events = await eventsUntilEnd(t, org.secret, admission.executionId, 60_000);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'failed', category: 'forbidden' });
    expect(tools.requests).toHaveLength(0);
  });
});

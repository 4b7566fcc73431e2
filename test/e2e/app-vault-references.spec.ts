import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { startSdkServer, type RunningSdkServer } from '../fakes/mcp-test-servers';
import { expectDeclared } from '../support/api-assertions';
import { addMember, bearer, createChatFixture, eventsUntilEnd, sendMessage } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Vault references in App connection headers and variables (SEC-02): saved as given, checked for
 * the caller when the connection is saved (`vaults.use`, the item's `allowedHosts`), and checked
 * again right before each send, with the rights of the work's member. A literal value is sealed
 * and answered as null (apps.spec.ts). A legacy SDK McpServer on loopback records the headers it
 * received.
 */
describe('Vault references in App connections', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let server: RunningSdkServer;
  let calls = 0;
  const SECRET = 'vault-secret-for-the-app-7f3a';

  beforeAll(async () => {
    t = await startTestApp();
    fake = await FakeOpenAiServer.start();
    server = await startSdkServer({
      era: 'legacy',
      tools: () => [
        {
          name: 'whoami',
          inputSchema: { type: 'object' },
          handler: async () => {
            calls += 1;
            return { text: 'you are known' };
          },
        },
      ],
    });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
    await t?.close();
  });

  const post = (secret: string, path: string, body: unknown) => t.http().post(path).set('authorization', bearer(secret)).send(body as object);
  const sentKeys = (from: number, rpc: string): Array<string | undefined> => server.requests.slice(from).filter((r) => r.rpc === rpc).map((r) => r.headers?.['x-api-key']);

  async function vaultItem(secret: string, allowedHosts: string[]): Promise<{ vaultId: string; itemId: string }> {
    const vault = (await post(secret, '/v1/vaults', { name: `v-${Math.random().toString(16).slice(2, 8)}` }).expect(201)).body as { id: string };
    const item = (await post(secret, `/v1/vaults/${vault.id}/items`, { name: 'app key', fields: { key: SECRET }, allowedHosts }).expect(201)).body as { id: string };
    return { vaultId: vault.id, itemId: item.id };
  }

  it('[SEC-02] a header reference is checked at save: an item whose allowedHosts omit the server is 400 on that header; a member without vaults.use is 403', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const app = (await post(chat.secret, '/v1/apps', { url: server.url }).expect(201)).body as { id: string };
    const elsewhere = await vaultItem(chat.secret, ['api.example.com']);
    const refused = await post(chat.secret, `/v1/apps/${app.id}/connections`, { headers: { 'X-Api-Key': { vaultItemId: elsewhere.itemId, field: 'key' } } });
    expectDeclared(refused, 400, 'InvalidInput');
    expect((refused.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['headers.X-Api-Key']);
    const local = await vaultItem(chat.secret, ['127.0.0.1']);
    const member = await addMember(t, chat.organizationId);
    expectDeclared(await post(member.secret, `/v1/apps/${app.id}/connections`, { owner: 'member', headers: { 'X-Api-Key': { vaultItemId: local.itemId, field: 'key' } } }), 403, 'Forbidden');
    const unknownField = await post(chat.secret, `/v1/apps/${app.id}/connections`, { headers: { 'X-Api-Key': { vaultItemId: local.itemId, field: 'nope' } } });
    expect((unknownField.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['headers.X-Api-Key.field']);
  });

  it('[SEC-02] a header reference is answered as given, opened for every send; once the member loses vaults.use, the next call fails forbidden and sends nothing', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const app = (await post(chat.secret, '/v1/apps', { url: server.url }).expect(201)).body as { id: string };
    const { vaultId, itemId } = await vaultItem(chat.secret, ['127.0.0.1']);
    const member = await addMember(t, chat.organizationId);
    await t.http().put(`/v1/vaults/${vaultId}/users`).set('authorization', bearer(chat.secret)).send({ memberIds: [member.memberId] }).expect(200);

    const from = server.requests.length;
    const reference = { vaultItemId: itemId, field: 'key', prefix: 'Key ' };
    const connection = (await post(member.secret, `/v1/apps/${app.id}/connections`, { owner: 'member', headers: { 'X-Api-Key': reference } }).expect(201)).body as { id: string; state: string };
    expect(connection.state).toBe('ready');
    const read = (await t.http().get(`/v1/connections/${connection.id}`).set('authorization', bearer(member.secret)).expect(200)).body as Record<string, unknown>;
    expect(read.headers).toEqual({ 'X-Api-Key': reference });
    expect(JSON.stringify(read)).not.toContain(SECRET);
    // The probe's handshake carried the opened value.
    expect(sentKeys(from, 'initialize')).toEqual([`Key ${SECRET}`]);

    await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', bearer(member.secret)).send({ tools: [{ kind: 'app', connectionId: connection.id, tools: ['whoami'] }] }).expect(200);
    const chatOfMember = (await post(member.secret, '/v1/chats', { botId: chat.botId }).expect(201)).body as { id: string };
    fake.enqueue(toolCallReply('c1', 'whoami', ['{}']), textReply(['Known.']));
    const first = await sendMessage(t, member.secret, chatOfMember.id, 'Who am I?');
    const events = await eventsUntilEnd(t, member.secret, first.executionId);
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ isError: false });
    expect(calls).toBe(1);
    expect(sentKeys(from, 'tools/call')).toEqual([`Key ${SECRET}`]);

    // The right is taken away: the next send checks it again, fails forbidden, and nothing goes out.
    await t.http().put(`/v1/vaults/${vaultId}/users`).set('authorization', bearer(chat.secret)).send({ memberIds: [] }).expect(200);
    const before = server.requests.length;
    const start = fake.requests.length;
    fake.enqueue(toolCallReply('c2', 'whoami', ['{}']), textReply(['Refused.']));
    const second = await sendMessage(t, member.secret, chatOfMember.id, 'Again?');
    const refused = await eventsUntilEnd(t, member.secret, second.executionId);
    expect(refused.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(refused.find((e) => e.type === 'tool.result')).toMatchObject({ isError: true, category: 'forbidden', errorId: expect.any(String) });
    const toolMessage = ((fake.requests[start + 1]!.body as { messages: Array<{ role: string; content: string }> }).messages ?? []).filter((m) => m.role === 'tool').at(-1)!.content;
    expect(toolMessage).toMatch(/Vault reference cannot be used/);
    expect(toolMessage).not.toContain(SECRET);
    expect(calls).toBe(1);
    expect(server.requests.slice(before).some((r) => r.rpc === 'tools/call')).toBe(false);
  });
});

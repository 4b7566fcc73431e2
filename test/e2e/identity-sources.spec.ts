import { Engine } from '@openbot/engine';
import { TurnHooks, type TurnHookContext } from '@openbot/features';
import { FakeOpenAiServer, textReply } from '../fakes/fake-openai-server';
import { addMember, createChatFixture, eventsUntilEnd, listMessages, sendMessage } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * IDN-04 end to end: a Turn's identity comes from the authenticated caller of its command, never
 * from who wrote the Chat's earlier messages, who created the Chat, or the order plugins run in.
 * The identity is read as the engine stored it (sealed with the execution, opened here).
 */
describe('[IDN-04] where a Turn\'s identity comes from', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;

  beforeAll(async () => {
    t = await startTestApp();
    model = await FakeOpenAiServer.start();
  });
  afterAll(async () => {
    await model?.close();
    await t?.close();
  });

  interface Identity {
    owner: { kind: string; id: string | null };
    actor: { kind: string; id: string };
    token: { kind: string; id: string } | null;
    botId: string | null;
  }
  const identityOf = async (executionId: string): Promise<Identity> => (await t.app.get(Engine).identity(executionId)) as unknown as Identity;
  const keyOf = async (memberId: string): Promise<string> => (await t.database.query<{ id: string }>('SELECT id FROM api_keys WHERE member_id = $1', [memberId]))[0]!.id;

  it('[IDN-04] in one Chat, each Turn acts as the member whose key sent its message, never as the Chat\'s creator, the earlier messages\' author or the order the plugins ran in', async () => {
    // Two plugins that see each Turn start; they run in registration order and neither is given an identity to change.
    const seen: Array<{ plugin: string; context: string[] }> = [];
    const hooks = t.app.get(TurnHooks);
    for (const name of ['idn04-second-registered-first', 'idn04-first-registered-second']) {
      hooks.register({
        name,
        points: ['turn.started'],
        run: async (context: TurnHookContext) => {
          seen.push({ plugin: name, context: Object.keys(context).sort() });
          return Promise.resolve();
        },
      });
    }
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl });
    const member = await addMember(t, chat.organizationId, 'member');

    // The owner created the Chat and wrote its first message.
    model.enqueue(textReply(['Hello owner.']), textReply(['Hello member.']), textReply(['Hello again.']));
    const first = await sendMessage(t, chat.secret, chat.chatId, 'From the owner');
    expect((await eventsUntilEnd(t, chat.secret, first.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    // Then another member writes in the same Chat: their Turn is theirs, not the Chat's or its earlier author's.
    const second = await sendMessage(t, member.secret, chat.chatId, 'From the member');
    expect((await eventsUntilEnd(t, member.secret, second.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    // And the owner again: back to the owner, whoever wrote last.
    const third = await sendMessage(t, chat.secret, chat.chatId, 'Owner once more');
    expect((await eventsUntilEnd(t, chat.secret, third.executionId)).at(-1)).toMatchObject({ state: 'completed' });

    const ownerKey = await keyOf(chat.memberId);
    const memberKey = await keyOf(member.memberId);
    const expected = (memberId: string, keyId: string) => ({
      owner: { kind: 'organization', id: chat.organizationId },
      actor: { kind: 'member', id: memberId },
      token: { kind: 'api-key', id: keyId },
      botId: chat.botId,
    });
    expect(await identityOf(first.executionId)).toMatchObject(expected(chat.memberId, ownerKey));
    expect(await identityOf(second.executionId)).toMatchObject(expected(member.memberId, memberKey));
    expect(await identityOf(third.executionId)).toMatchObject(expected(chat.memberId, ownerKey));
    // The scope the engine keeps in the clear agrees with the sealed identity.
    const scopes = await t.database.query<{ id: string; scope_id: string }>('SELECT id, scope_id FROM executions WHERE id = ANY($1::uuid[])', [[first.executionId, second.executionId, third.executionId]]);
    expect(Object.fromEntries(scopes.map((s) => [s.id, s.scope_id]))).toEqual({ [first.executionId]: chat.memberId, [second.executionId]: member.memberId, [third.executionId]: chat.memberId });
    // The Chat's messages say who wrote them as Turns of their own; none of it fed the identity.
    expect((await listMessages(t, chat.secret, chat.chatId)).filter((m) => m.role === 'user').map((m) => [m.content, m.turnId])).toEqual([
      ['From the owner', first.turnId],
      ['From the member', second.turnId],
      ['Owner once more', third.turnId],
    ]);

    // The plugins ran for every Turn in their order, and nothing they are given names an actor, a token or a scope.
    expect(seen.map((s) => s.plugin)).toEqual(Array.from({ length: 3 }, () => ['idn04-second-registered-first', 'idn04-first-registered-second']).flat());
    for (const { context } of seen) expect(context.filter((key) => /actor|token|scope|identity|member/i.test(key))).toEqual([]);
  });
});

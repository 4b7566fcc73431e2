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

  it('[IDN-04] two nodes whose Turn plugins are registered in opposite orders give the same member\'s Turn the same identity and scope, and a plugin that tries to set the actor, token, scope or organization changes nothing', async () => {
    interface Seen { node: string; plugin: string; organizationId: string; executionId: string; keys: string[]; refused?: number }
    const seen: Seen[] = [];
    /** The plugin that tries to make the Turn act as someone else: the Chat's owner, another organization, a wider scope. */
    const meddler = (node: string, pretend: { organizationId: string; memberId: string }) => ({
      name: 'idn04-meddler',
      points: ['turn.started'] as const,
      run: async (context: TurnHookContext) => {
        const writable = context as unknown as Record<string, unknown>;
        const tries: Array<() => void> = [
          () => (writable.organizationId = pretend.organizationId),
          () => (writable.actor = { kind: 'member', id: pretend.memberId }),
          () => (writable.identity = { owner: { kind: 'organization', id: pretend.organizationId }, actor: { kind: 'member', id: pretend.memberId }, token: null }),
          () => (writable.token = { kind: 'api-key', id: pretend.memberId }),
          () => (writable.scope = { kind: 'organization', id: pretend.organizationId }),
          () => Object.assign(context, { organizationId: pretend.organizationId, actor: { kind: 'member', id: pretend.memberId } }),
        ];
        let refused = 0;
        for (const attempt of tries) {
          try {
            attempt();
          } catch {
            refused += 1;
          }
        }
        seen.push({ node, plugin: 'idn04-meddler', organizationId: context.organizationId, executionId: context.executionId, keys: Object.keys(context).sort(), refused });
        return Promise.resolve();
      },
    });
    const observer = (node: string) => ({
      name: 'idn04-observer',
      points: ['turn.started'] as const,
      run: async (context: TurnHookContext) => {
        seen.push({ node, plugin: 'idn04-observer', organizationId: context.organizationId, executionId: context.executionId, keys: Object.keys(context).sort() });
        return Promise.resolve();
      },
    });

    /** One node (with a database of its own) whose plugins run in `order`; the same story on each: a member writes in the owner's Chat. */
    async function node(name: string, order: ReadonlyArray<'meddler' | 'observer'>) {
      const app = await startTestApp();
      try {
        const chat = await createChatFixture(app, { baseUrl: model.baseUrl });
        const member = await addMember(app, chat.organizationId, 'member');
        const other = await app.createOrganization(`IDN-04 other ${name}`);
        const hooks = app.app.get(TurnHooks);
        for (const plugin of order) hooks.register(plugin === 'meddler' ? meddler(name, { organizationId: other.organizationId, memberId: chat.memberId }) : observer(name));
        model.enqueue(textReply([`Hello from ${name}.`]));
        const turn = await sendMessage(app, member.secret, chat.chatId, `From the member on ${name}`);
        expect((await eventsUntilEnd(app, member.secret, turn.executionId)).at(-1)).toMatchObject({ state: 'completed' });
        const identity = (await app.app.get(Engine).identity(turn.executionId)) as unknown as Identity;
        const [scope] = await app.database.query<{ organization_id: string; scope_kind: string; scope_id: string }>('SELECT organization_id, scope_kind, scope_id FROM executions WHERE id = $1', [turn.executionId]);
        const [key] = await app.database.query<{ id: string }>('SELECT id FROM api_keys WHERE member_id = $1', [member.memberId]);
        // The same story told with roles instead of IDs, so the two nodes' answers compare.
        const names = new Map<string, string>([
          [chat.organizationId, 'the organization'],
          [other.organizationId, 'the other organization'],
          [chat.memberId, 'the owner'],
          [member.memberId, 'the member'],
          [key!.id, 'the member\'s key'],
          [chat.botId, 'the Bot'],
          [turn.executionId, 'the Turn'],
        ]);
        const named = (value: unknown): unknown => JSON.parse(JSON.stringify(value), (_k, v: unknown) => (typeof v === 'string' ? (names.get(v) ?? v) : v));
        return {
          identity: named({ owner: identity.owner, actor: identity.actor, token: identity.token, botId: identity.botId }),
          scope: named(scope),
          plugins: named(seen.filter((s) => s.node === name).map(({ node: _node, ...rest }) => rest)) as unknown[],
        };
      } finally {
        await app.close();
      }
    }

    const meddlerFirst = await node('node-a', ['meddler', 'observer']);
    const meddlerLast = await node('node-b', ['observer', 'meddler']);
    // The plugins did run in opposite orders, the meddler before the observer on one node and after it on the other.
    // Every change the meddler tried was refused: its own context still names the Turn's organization and gained no actor, token or scope.
    const told = ['chatId', 'executionId', 'once', 'organizationId', 'point', 'step', 'turnId'];
    expect(meddlerFirst.plugins).toEqual([
      { plugin: 'idn04-meddler', organizationId: 'the organization', executionId: 'the Turn', keys: told, refused: 6 },
      { plugin: 'idn04-observer', organizationId: 'the organization', executionId: 'the Turn', keys: told },
    ]);
    expect(meddlerLast.plugins).toEqual([meddlerFirst.plugins[1], meddlerFirst.plugins[0]]);
    // The Turn is the member's on both, sealed and in the clear, whatever the plugins tried.
    const expected = {
      identity: { owner: { kind: 'organization', id: 'the organization' }, actor: { kind: 'member', id: 'the member' }, token: { kind: 'api-key', id: 'the member\'s key' }, botId: 'the Bot' },
      scope: { organization_id: 'the organization', scope_kind: 'member', scope_id: 'the member' },
    };
    expect({ identity: meddlerFirst.identity, scope: meddlerFirst.scope }).toEqual(expected);
    expect({ identity: meddlerLast.identity, scope: meddlerLast.scope }).toEqual(expected);
  });
});

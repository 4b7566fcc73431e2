import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { expectDeclaredNoErrorId, UNKNOWN_ID } from '../support/api-assertions';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, waitForEvent, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Who may decide an approval (issue 44, decision 075), replayed over HTTP: by default the member
 * whose message started the Turn, owners and admins — the rule pause and the outcome decision
 * follow; a tool may name more approvers or ask for a second person; nobody decides a call of a
 * Turn that runs with wider rights than their own. The inbox lists only what the caller may decide.
 */
describe('approvers', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await Promise.all([model?.close(), tools?.close()]);
    await t?.close();
  });
  beforeEach(async () => {
    await Promise.all([model?.close(), tools?.close()]);
    [model, tools] = await Promise.all([FakeOpenAiServer.start(), FakeToolServer.start()]);
    tools.fallback = jsonReply(200, { modelOutput: 'paid' });
  });

  const pay = (approvers?: Record<string, unknown>) => ({
    name: 'pay',
    description: 'Pays money',
    parameters: { type: 'object', properties: { amount: { type: 'number' } } },
    kind: 'http',
    url: tools.url('/pay'),
    approval: 'always',
    ...(approvers === undefined ? {} : { approvers }),
  });
  const addMember = async (chat: ChatFixture, role: 'member' | 'admin' | 'viewer'): Promise<{ memberId: string; secret: string }> => {
    const body = (await t.http().post('/v1/members').set('authorization', bearer(chat.secret)).send({ role }).expect(201)).body as { member: { id: string }; apiKey: { secret: string } };
    return { memberId: body.member.id, secret: body.apiKey.secret };
  };
  const setTools = (chat: ChatFixture, list: unknown[]) => t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', bearer(chat.secret)).send({ tools: list });
  const decide = (secret: string, id: string, decision: 'approve' | 'deny' = 'approve') => t.http().post(`/v1/approvals/${id}/decision`).set('authorization', bearer(secret)).send({ decision });
  const inbox = async (secret: string, executionId: string): Promise<Array<{ id: string }>> =>
    ((await t.http().get(`/v1/approvals?executionId=${executionId}`).set('authorization', bearer(secret)).expect(200)).body as { data: Array<{ id: string }> }).data;
  const stateOf = async (chat: ChatFixture, id: string): Promise<string> =>
    ((await t.http().get(`/v1/approvals/${id}`).set('authorization', bearer(chat.secret)).expect(200)).body as { state: string }).state;

  /** A Turn of `actor` that waits for the approval of one `pay` call; its approval's ID. */
  async function pendingPay(chat: ChatFixture, actor: string): Promise<{ executionId: string; approvalId: string }> {
    model.enqueue(toolCallReply('call_pay', 'pay', ['{"amount":900}'], [10, 5]), textReply(['Paid.']));
    const turn = await sendMessage(t, actor, chat.chatId, 'Pay 900');
    await waitForEvent(t, chat.secret, turn.executionId, 'approval.requested');
    const [row] = await t.database.query<{ id: string }>('SELECT id FROM approvals WHERE execution_id = $1', [turn.executionId]);
    return { executionId: turn.executionId, approvalId: row!.id };
  }

  it("[IDN-07] [IDN-08] a plain member cannot approve a call in an admin's Turn: 403 naming why, the call stays pending and unsent, and their inbox does not list it; the admin approves and it runs", async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [pay()] });
    const admin = await addMember(chat, 'admin');
    const member = await addMember(chat, 'member');
    const { executionId, approvalId } = await pendingPay(chat, admin.secret);

    const refused = await decide(member.secret, approvalId);
    expectDeclaredNoErrorId(refused, 403, 'Forbidden');
    expect((refused.body as { message: string }).message).toContain('member whose message started this Turn');
    expect(await stateOf(chat, approvalId)).toBe('pending');
    expect(tools.requests).toHaveLength(0);
    // A denial is a decision too: the member cannot deny it either.
    expectDeclaredNoErrorId(await decide(member.secret, approvalId, 'deny'), 403, 'Forbidden');
    expect(await inbox(member.secret, executionId)).toEqual([]);
    expect((await inbox(admin.secret, executionId)).map((a) => a.id)).toEqual([approvalId]);

    await decide(admin.secret, approvalId).expect(200);
    expect((await eventsUntilEnd(t, admin.secret, executionId)).at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(tools.requests).toHaveLength(1);
  });

  it("[IDN-07] [IDN-08] a tool's approvers may name a member: that member approves another member's call and it runs; a member it does not name gets 403", async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl });
    const [actor, named, other] = [await addMember(chat, 'member'), await addMember(chat, 'member'), await addMember(chat, 'member')];
    await setTools(chat, [pay({ members: [named.memberId] })]).expect(200);
    const { executionId, approvalId } = await pendingPay(chat, actor.secret);

    expectDeclaredNoErrorId(await decide(other.secret, approvalId), 403, 'Forbidden');
    expect(await inbox(other.secret, executionId)).toEqual([]);
    expect((await inbox(named.secret, executionId)).map((a) => a.id)).toEqual([approvalId]);
    expect(((await decide(named.secret, approvalId).expect(200)).body as { decidedBy: unknown }).decidedBy).toEqual({ kind: 'member', id: named.memberId });
    expect((await eventsUntilEnd(t, actor.secret, executionId)).at(-1)).toMatchObject({ state: 'completed' });
    expect(tools.requests).toHaveLength(1);
  });

  it('[IDN-07] whatever approvers names, a member never approves a call of a Turn with wider rights: a named role gets 403 naming the rights it lacks', async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [pay({ roles: ['member'] })] });
    const member = await addMember(chat, 'member');
    const peer = await addMember(chat, 'member');
    // The owner's Turn holds rights no member has.
    const owners = await pendingPay(chat, chat.secret);
    const refused = await decide(member.secret, owners.approvalId);
    expectDeclaredNoErrorId(refused, 403, 'Forbidden');
    expect((refused.body as { message: string }).message).toContain('members.manage');
    expect(await inbox(member.secret, owners.executionId)).toEqual([]);
    expect(await stateOf(chat, owners.approvalId)).toBe('pending');
    await decide(chat.secret, owners.approvalId, 'deny').expect(200);
    await eventsUntilEnd(t, chat.secret, owners.executionId);

    // A peer's Turn runs with the same rights: the named role decides it.
    const peers = await pendingPay(chat, peer.secret);
    expect((await inbox(member.secret, peers.executionId)).map((a) => a.id)).toEqual([peers.approvalId]);
    await decide(member.secret, peers.approvalId).expect(200);
    expect((await eventsUntilEnd(t, peer.secret, peers.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    expect(tools.requests).toHaveLength(1);
  });

  it('[IDN-07] the rights compared are role ∩ key scopes on both sides: a Turn begun with a scoped key is decided by a key holding those scopes, and a narrower key is refused naming what it lacks', async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl });
    const [actor, named] = [await addMember(chat, 'member'), await addMember(chat, 'member')];
    await setTools(chat, [pay({ members: [named.memberId] })]).expect(200);
    const scopedKey = async (secret: string, scopes: string[]): Promise<string> =>
      ((await t.http().post('/v1/api-keys').set('authorization', bearer(secret)).send({ name: 'scoped', scopes }).expect(201)).body as { secret: string }).secret;
    // The Turn runs with the actor's key: chats and reading only, none of the member role's other rights.
    const turnScopes = ['bots.read', 'chats.read', 'chats.write', 'executions.read'];
    const { executionId, approvalId } = await pendingPay(chat, await scopedKey(actor.secret, turnScopes));

    const narrow = await scopedKey(named.secret, ['approvals.decide', 'executions.read']);
    const refused = await decide(narrow, approvalId);
    expectDeclaredNoErrorId(refused, 403, 'Forbidden');
    expect((refused.body as { message: string }).message).toContain('bots.read, chats.read, chats.write');
    expect(await inbox(narrow, executionId)).toEqual([]);

    // Enough: the Turn's scopes and approvals.decide, though far less than the actor's role.
    const enough = await scopedKey(named.secret, ['approvals.decide', ...turnScopes]);
    expect((await inbox(enough, executionId)).map((a) => a.id)).toEqual([approvalId]);
    await decide(enough, approvalId).expect(200);
    expect((await eventsUntilEnd(t, actor.secret, executionId)).at(-1)).toMatchObject({ state: 'completed' });
    expect(tools.requests).toHaveLength(1);
  });

  it("[IDN-07] a named approver who may not use a Vault the Turn's member may use gets 403 naming Vaults; once granted that Vault, they approve and the call runs", async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl });
    const [actor, named] = [await addMember(chat, 'member'), await addMember(chat, 'member')];
    await setTools(chat, [pay({ members: [named.memberId] })]).expect(200);
    // The actor's own Vault: its creator is granted it, the named member is not.
    const vault = (await t.http().post('/v1/vaults').set('authorization', bearer(actor.secret)).send({ name: 'actor-only' }).expect(201)).body as { id: string };
    const { executionId, approvalId } = await pendingPay(chat, actor.secret);

    const refused = await decide(named.secret, approvalId);
    expectDeclaredNoErrorId(refused, 403, 'Forbidden');
    expect((refused.body as { message: string }).message).toContain('Vaults');
    expect(await inbox(named.secret, executionId)).toEqual([]);
    expect(tools.requests).toHaveLength(0);

    await t.http().put(`/v1/vaults/${vault.id}/users`).set('authorization', bearer(chat.secret)).send({ memberIds: [actor.memberId, named.memberId] }).expect(200);
    expect((await inbox(named.secret, executionId)).map((a) => a.id)).toEqual([approvalId]);
    await decide(named.secret, approvalId).expect(200);
    expect((await eventsUntilEnd(t, actor.secret, executionId)).at(-1)).toMatchObject({ state: 'completed' });
    expect(tools.requests).toHaveLength(1);
  });

  it("[IDN-07] a tool that asks for a second person refuses the Turn's own member alone (403, still pending, not in their inbox); another admin approves and it runs", async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [pay({ secondPerson: true })] });
    const admin = await addMember(chat, 'admin');
    const { executionId, approvalId } = await pendingPay(chat, admin.secret);

    const refused = await decide(admin.secret, approvalId);
    expectDeclaredNoErrorId(refused, 403, 'Forbidden');
    expect((refused.body as { message: string }).message).toContain('second person');
    expect(await stateOf(chat, approvalId)).toBe('pending');
    expect(await inbox(admin.secret, executionId)).toEqual([]);
    expect(tools.requests).toHaveLength(0);

    await decide(chat.secret, approvalId).expect(200);
    expect((await eventsUntilEnd(t, admin.secret, executionId)).at(-1)).toMatchObject({ state: 'completed' });
    expect(tools.requests).toHaveLength(1);
  });

  it('approvers is validated: a role that cannot decide, a malformed or unknown member and a non-boolean secondPerson are 400 on their field; a valid one is answered as saved', async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl });
    const bad = await setTools(chat, [pay({ roles: ['viewer'], members: ['nope'], secondPerson: 'yes' })]).expect(400);
    const paths = (bad.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['tools.0.approvers.roles.0', 'tools.0.approvers.members.0', 'tools.0.approvers.secondPerson']));
    // A member of another organization is unknown here.
    const stranger = await t.createOrganization('Stranger');
    for (const memberId of [UNKNOWN_ID, stranger.memberId]) {
      const unknown = await setTools(chat, [pay({ members: [memberId] })]).expect(400);
      expect((unknown.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual(['tools.0.approvers.members.0']);
    }
    const member = await addMember(chat, 'member');
    const saved = await setTools(chat, [pay({ roles: ['member'], members: [member.memberId], secondPerson: true })]).expect(200);
    expect((saved.body as { tools: Array<{ approvers?: unknown }> }).tools[0]!.approvers).toEqual({ roles: ['member'], members: [member.memberId], secondPerson: true });
  });
});

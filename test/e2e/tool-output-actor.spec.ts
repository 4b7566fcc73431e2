import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { expectDeclaredNoErrorId } from '../support/api-assertions';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, waitForEvent, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';

/**
 * A client tool's output steers a Turn that acts under its actor's identity: only that member,
 * an owner or an admin may post it. Another member of the organization gets 403 and the Turn
 * keeps waiting for the real answer.
 */
describe("tool outputs belong to the Turn's actor", () => {
  let t: TestApp;
  let model: FakeOpenAiServer;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await model?.close();
    await t?.close();
  });
  beforeEach(async () => {
    await model?.close();
    model = await FakeOpenAiServer.start();
  });

  const PICK = { name: 'pick_file', description: 'The user picks a file', parameters: { type: 'object', properties: {} } };
  const addMember = async (chat: ChatFixture, role: string): Promise<{ memberId: string; secret: string }> => {
    const res = await t.http().post('/v1/members').set('authorization', bearer(chat.secret)).send({ role }).expect(201);
    const body = res.body as { member: { id: string }; apiKey: { secret: string } };
    return { memberId: body.member.id, secret: body.apiKey.secret };
  };
  const post = (chat: ChatFixture, secret: string, output: string) =>
    t.http().post(`/v1/chats/${chat.chatId}/tool-outputs`).set('authorization', bearer(secret)).send({ callId: 'call_f1', output });

  /** A Turn of `actor` waiting on the client tool call `call_f1`. */
  async function waitingTurn(chat: ChatFixture, actor: string): Promise<string> {
    model.enqueue(toolCallReply('call_f1', 'pick_file', ['{}']), textReply(['Got it.']));
    const admitted = await sendMessage(t, actor, chat.chatId, 'Pick a file');
    await waitForEvent(t, actor, admitted.executionId, 'tool.called');
    await waitForExecutionState(t, actor, admitted.executionId, 'waiting');
    return admitted.executionId;
  }

  it("[STC-03] another member cannot answer a member's tool call: 403 Forbidden, nothing saved, the Turn goes on with its actor's answer", async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [PICK] });
    const actor = await addMember(chat, 'member');
    const intruder = await addMember(chat, 'member');
    const executionId = await waitingTurn(chat, actor.secret);

    expectDeclaredNoErrorId(await post(chat, intruder.secret, 'injected.pdf'), 403, 'Forbidden');
    const [saved] = await t.database.query<{ answered_at: Date | null }>(
      'SELECT k.answered_at FROM chat_client_tool_calls k JOIN chat_turns t ON t.id = k.turn_id WHERE t.execution_id = $1',
      [executionId],
    );
    expect(saved!.answered_at).toBeNull();
    expect(((await t.http().get(`/v1/executions/${executionId}`).set('authorization', bearer(actor.secret)).expect(200)).body as { state: string }).state).toBe('waiting');

    expect((await post(chat, actor.secret, 'report.pdf')).status).toBe(202);
    const events = await eventsUntilEnd(t, actor.secret, executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    const toolMessage = (model.requests[1]!.body as { messages: Array<{ role: string; content?: string }> }).messages.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toBe('report.pdf');
  });

  it("[STC-03] an admin may answer a member's tool call", async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [PICK] });
    const actor = await addMember(chat, 'member');
    const admin = await addMember(chat, 'admin');
    const executionId = await waitingTurn(chat, actor.secret);
    expect((await post(chat, admin.secret, 'chosen by admin.pdf')).status).toBe(202);
    expect((await eventsUntilEnd(t, actor.secret, executionId)).at(-1)).toMatchObject({ state: 'completed' });
  });
});

import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/** The built-in plan tool (decision 025): saved with the Turn, streamed, and read back over HTTP. */
describe('plan tool', () => {
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

  it('[FW-02] update_plan saves the plan with the Turn: plan.updated streams it and GET /v1/executions/{id}/plan answers it; bad arguments change nothing', async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [{ kind: 'plan' }] });
    const bot = await t.http().get(`/v1/bots/${chat.botId}`).set('authorization', bearer(chat.secret)).expect(200);
    expect((bot.body as { tools: Array<{ name: string; kind: string }> }).tools).toEqual([expect.objectContaining({ name: 'update_plan', kind: 'plan' })]);

    const steps = [
      { title: 'Read the brief', status: 'done' },
      { title: 'Write the answer', status: 'in_progress' },
    ];
    model.enqueue(
      toolCallReply('p1', 'update_plan', [JSON.stringify({ steps })], [5, 2]),
      toolCallReply('p2', 'update_plan', ['{"steps":[{"title":"x","status":"maybe"}]}'], [5, 2]),
      textReply(['Planned.']),
    );
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Plan it');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(events.filter((e) => e.type === 'plan.updated')).toEqual([expect.objectContaining({ steps, step: 1 })]);
    expect(events.filter((e) => e.type === 'tool.result').map((e) => [e.callId, e.isError])).toEqual([
      ['p1', false],
      ['p2', true],
    ]);
    const plan = await t.http().get(`/v1/executions/${turn.executionId}/plan`).set('authorization', bearer(chat.secret)).expect(200);
    expect(plan.body).toEqual({ steps, updatedAt: expect.any(String) });

    // A Turn that made no plan has none.
    model.enqueue(textReply(['No plan.']));
    const plain = await sendMessage(t, chat.secret, chat.chatId, 'Just answer');
    await eventsUntilEnd(t, chat.secret, plain.executionId);
    const none = await t.http().get(`/v1/executions/${plain.executionId}/plan`).set('authorization', bearer(chat.secret)).expect(404);
    expect(none.body).toMatchObject({ type: 'PlanNotFound' });
  });
});

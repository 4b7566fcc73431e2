import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { EchoModule } from '../fixtures/features/echo/echo.module';
import { expectDeclared, issuePaths } from '../support/api-assertions';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

interface ModelMessage {
  role: string;
  content?: string | null;
  tool_call_id?: string;
}

/** The `tool` messages of the model's request `index`: what it read of each call's answer. */
function toolMessages(model: FakeOpenAiServer, index: number): Array<{ tool_call_id?: string; content?: string | null }> {
  const request = model.requests[index];
  if (request === undefined) throw new Error(`the model got ${model.requests.length} request(s), not ${index + 1}`);
  return (request.body as { messages: ModelMessage[] }).messages.filter((m) => m.role === 'tool').map((m) => ({ tool_call_id: m.tool_call_id, content: m.content }));
}

const ECHO = { name: 'echo', description: 'Echoes the text and counts its characters', parameters: { type: 'object', properties: { text: { type: 'string' } } }, kind: 'echo' };

/**
 * The recipe "add a feature" (docs/architecture.md, decision 080), shown by a feature of the
 * tests: test/fixtures/features/echo brings a workflow (`echo.count`) and a tool kind (`echo`) of
 * its own, and the node gets it with one registration line. No list outside its folder names
 * the kind: a Bot declares it because the node's feature registered it.
 */
describe('a feature added by its folder and one registration line', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;

  beforeAll(async () => {
    // The one registration line.
    t = await startTestApp({ imports: [EchoModule] });
    model = await FakeOpenAiServer.start();
  });
  afterAll(async () => {
    await model?.close();
    await t?.close();
  });

  it('a Bot declares the feature’s own tool kind over HTTP; the Turn calls it, its workflow runs as a child, and the model reads the answer', async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [ECHO] });
    const bot = await t.http().get(`/v1/bots/${chat.botId}`).set('authorization', bearer(chat.secret)).expect(200);
    expect((bot.body as { tools: unknown[] }).tools).toEqual([expect.objectContaining({ name: 'echo', kind: 'echo' })]);

    model.enqueue(toolCallReply('e1', 'echo', ['{"text":', '"héllo"}'], [5, 2]), textReply(['Echoed.']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Echo it');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(events.filter((e) => e.type.startsWith('tool.')).map((e) => [e.type, e.callId, e.isError])).toEqual([
      ['tool.called', 'e1', undefined],
      ['tool.result', 'e1', false],
    ]);
    // The next model step read the answer of the feature's workflow.
    expect(toolMessages(model, 1)).toEqual([{ tool_call_id: 'e1', content: JSON.stringify({ echoed: 'héllo', characters: 5 }) }]);
    // The call ran as the feature's own workflow, a child of the Turn.
    const children = await t.http().get(`/v1/executions/${turn.executionId}/children`).set('authorization', bearer(chat.secret)).expect(200);
    expect((children.body as { data: unknown[] }).data).toEqual([expect.objectContaining({ kind: 'echo.count', state: 'completed', resource: { type: 'tool-call', id: 'e1' } })]);
  });

  it('[ERR-02] a kind no feature of the node registers is 400 on tools.<n>.kind, naming the kinds it registers, the feature’s among them', async () => {
    const org = await t.createOrganization('Recipe kinds');
    await t.http().post('/v1/model-providers').set('authorization', bearer(org.secret)).send({ name: 'fake', kind: 'openai-compatible', baseUrl: model.baseUrl }).expect(201);
    const res = await t.http().post('/v1/bots').set('authorization', bearer(org.secret)).send({ name: 'b', model: 'fake/a', tools: [ECHO, { ...ECHO, name: 'other', kind: 'webhook' }] });
    expectDeclared(res, 400, 'InvalidInput');
    expect(issuePaths(res)).toEqual(['tools.1.kind']);
    const message = (res.body as { issues: Array<{ message: string }> }).issues[0]!.message;
    expect(message).toMatch(/^kind must be one of /);
    expect(message.slice('kind must be one of '.length).split(', ').sort()).toEqual(['app', 'background', 'client', 'delegate', 'echo', 'http', 'plan', 'remind']);
  });

  it('a Turn whose saved tool is of a kind no feature of the node provides answers that call with an error naming the kind, and goes on', async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [ECHO] });
    // As if the Bot was saved on a node whose feature is gone from this one.
    await t.database.query(`UPDATE bots SET tools = jsonb_set(tools, '{0,kind}', '"retired"') WHERE id = $1`, [chat.botId]);
    const before = model.requests.length;
    model.enqueue(toolCallReply('r1', 'echo', ['{"text":"x"}'], [5, 2]), textReply(['Sorry.']));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Echo it');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(events.filter((e) => e.type === 'tool.result').map((e) => [e.callId, e.isError])).toEqual([['r1', true]]);
    expect(toolMessages(model, before + 1)).toEqual([{ tool_call_id: 'r1', content: 'Error: the tool "echo" is of kind "retired", which no feature of this node provides.' }]);
  });
});

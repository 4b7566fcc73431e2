import { chunks, FakeOpenAiServer, heldStreamReply, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { bearer, eventsUntilEnd, sendMessage, waitForEvent } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * A delegate tool's task is admitted by the same rules as a message's Turn (IDN-05): the same
 * functions that refuse an HTTP message refuse the task, with the same text. (An App tool's
 * member connection follows the same idea: `mayUseConnection` is the one "may use" rule of the
 * Bot's declaration and of the Turn's call, narrower than "may see", which lets owners and admins
 * list every member's connections without using them.)
 */
describe('delegation admission', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;
  let secret: string;
  const releases: Array<() => void> = [];

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_ORG_RUNNING_TURNS: '2' } });
    model = await FakeOpenAiServer.start();
    const org = await t.createOrganization('Admitting');
    secret = org.secret;
    await t.http().post('/v1/model-providers').set('authorization', bearer(secret)).send({ name: 'fake', kind: 'openai-compatible', baseUrl: model.baseUrl }).expect(201);
  });
  afterAll(async () => {
    for (const release of releases.splice(0)) release();
    await model?.close();
    await t?.close();
  });

  const bot = async (name: string, tools: unknown[] = []): Promise<string> =>
    ((await t.http().post('/v1/bots').set('authorization', bearer(secret)).send({ name, model: 'fake/m', tools }).expect(201)).body as { id: string }).id;
  const chatOf = async (botId: string): Promise<string> => ((await t.http().post('/v1/chats').set('authorization', bearer(secret)).send({ botId }).expect(201)).body as { id: string }).id;
  const held = () => {
    let release!: () => void;
    const promise = new Promise<void>((r) => (release = r));
    releases.push(release);
    return heldStreamReply([chunks.role(), chunks.text('held'), chunks.finish('stop'), chunks.usage(5, 2)], { holdAfter: 2, release: promise });
  };

  it('[IDN-05] a delegate task past the running-Turns limit is refused by the same rule and text as an HTTP message, and no task Chat, Turn or execution is written', async () => {
    const helper = await bot('Helper');
    const lead = await bot('Lead', [{ name: 'ask_helper', kind: 'delegate', botId: helper }]);
    // One Turn runs and holds its slot: the organization may run two.
    model.enqueue(held());
    const first = await sendMessage(t, secret, await chatOf(helper), 'Hold on');
    await waitForEvent(t, secret, first.executionId, 'text.delta');
    // The lead's Turn is the second: its task would be the third.
    model.enqueue(toolCallReply('call_d', 'ask_helper', ['{"input":"Summarize"}'], [5, 2]), held());
    const requestsBefore = model.requests.length;
    const turn = await sendMessage(t, secret, await chatOf(lead), 'Ask the helper');
    await waitForEvent(t, secret, turn.executionId, 'text.delta');
    // Over HTTP the third Turn is 429 naming runningTurns.
    const refused = await t.http().post(`/v1/chats/${await chatOf(helper)}/messages`).set('authorization', bearer(secret)).send({ content: 'a third' });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ type: 'RateLimited', limit: 'runningTurns' });
    // The tool's call got the same refusal as its error result, and the model went on after it.
    const toolResults = (model.requests[requestsBefore + 1]!.body as { messages: Array<{ role: string; content: string }> }).messages.filter((m) => m.role === 'tool');
    expect(toolResults).toEqual([expect.objectContaining({ content: `Error: ${(refused.body as { message: string }).message} No task was started.` })]);
    expect(await t.database.query('SELECT id FROM chats WHERE parent_execution_id = $1', [turn.executionId])).toEqual([]);
    const children = (await t.http().get(`/v1/executions/${turn.executionId}/children`).set('authorization', bearer(secret)).expect(200)).body as { data: unknown[] };
    expect(children.data).toEqual([]);
    for (const release of releases.splice(0)) release();
    expect((await eventsUntilEnd(t, secret, turn.executionId)).at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect((await eventsUntilEnd(t, secret, first.executionId)).at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    // With a slot free again, the same delegation starts its task.
    model.enqueue(toolCallReply('call_e', 'ask_helper', ['{"input":"Summarize"}'], [5, 2]), textReply(['42.'], [5, 3]), textReply(['Helper says 42.'], [5, 3]));
    const again = await sendMessage(t, secret, await chatOf(lead), 'Ask again');
    const events = await eventsUntilEnd(t, secret, again.executionId);
    expect(events.find((e) => e.type === 'task.ended')).toMatchObject({ callId: 'call_e', state: 'completed' });
  });
});

import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, waitForEvent, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';
import { runCli, type CliRun } from '../support/cli-runner';

/** The compiled CLI's approval and task commands against a listening server: approvals list|approve|deny, executions pause|resume|children. */
const ROOT = join(__dirname, '..', '..');

jest.setTimeout(120_000);


describe('openbot CLI: approvals and tasks', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;
  let chat: ChatFixture;
  let env: Record<string, string>;

  function cli(args: readonly string[]): Promise<CliRun> {
    return runCli(args, env);
  }
  async function ok(args: readonly string[]): Promise<string> {
    const run = await cli(args);
    expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 0, stderr: '' });
    return run.stdout;
  }
  const json = async <T>(args: readonly string[]): Promise<T> => JSON.parse(await ok([...args, '--json'])) as T;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    [model, tools] = await Promise.all([FakeOpenAiServer.start(), FakeToolServer.start()]);
    const pay = { name: 'pay', description: 'Pays', parameters: { type: 'object' }, kind: 'http', url: tools.url('/pay'), approval: 'always' };
    chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [pay] });
    env = { OPENBOT_URL: `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`, OPENBOT_API_KEY: chat.secret, OPENBOT_CONFIG: join(ROOT, 'no-such-config.json') };
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([model?.close(), tools?.close()]);
  });

  it('approvals list|approve|deny decide pending tool calls; a second decision exits with an error', async () => {
    tools.fallback = jsonReply(200, { modelOutput: 'paid' });
    model.enqueue(toolCallReply('p1', 'pay', ['{"amount":1}'], [5, 1]), textReply(['Paid.'], [5, 1]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Pay 1');
    await waitForEvent(t, chat.secret, turn.executionId, 'approval.requested');
    const pending = await json<{ data: Array<{ id: string; state: string; toolName: string }> }>(['approvals', 'list', '--state', 'pending', '--execution', turn.executionId]);
    expect(pending.data).toEqual([expect.objectContaining({ state: 'pending', toolName: 'pay' })]);
    expect(await ok(['approvals', 'list', '--execution', turn.executionId])).toContain(pending.data[0]!.id);
    expect(await json(['approvals', 'approve', pending.data[0]!.id])).toMatchObject({ id: pending.data[0]!.id, state: 'approved', decidedBy: { kind: 'member' } });
    expect((await eventsUntilEnd(t, chat.secret, turn.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    expect(tools.requests).toHaveLength(1);
    const again = await cli(['approvals', 'deny', pending.data[0]!.id]);
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: expect.any(Number), stderr: expect.stringContaining('ApprovalAlreadyDecided') });
    expect(again.code).not.toBe(0);

    model.enqueue(toolCallReply('p2', 'pay', ['{"amount":2}'], [5, 1]), textReply(['Not paid.'], [5, 1]));
    const second = await sendMessage(t, chat.secret, chat.chatId, 'Pay 2');
    await waitForEvent(t, chat.secret, second.executionId, 'approval.requested');
    const [next] = (await json<{ data: Array<{ id: string }> }>(['approvals', 'list', '--state', 'pending'])).data;
    expect(await json(['approvals', 'deny', next!.id, '--reason', 'too much'])).toMatchObject({ state: 'denied', reason: 'too much' });
    expect((await eventsUntilEnd(t, chat.secret, second.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    expect(tools.requests).toHaveLength(1);
  });

  it('executions pause|resume|children steer a Turn and list its tasks', async () => {
    const helper = ((await t.http().post('/v1/bots').set('authorization', bearer(chat.secret)).send({ name: 'Helper', model: 'fake/gpt-test', tools: [{ name: 'ask_user', description: 'Asks', parameters: { type: 'object' } }] }).expect(201)).body as { id: string }).id;
    const lead = ((await t.http().post('/v1/bots').set('authorization', bearer(chat.secret)).send({ name: 'Lead', model: 'fake/gpt-test', tools: [{ name: 'ask_helper', kind: 'delegate', botId: helper }] }).expect(201)).body as { id: string }).id;
    const leadChat = ((await t.http().post('/v1/chats').set('authorization', bearer(chat.secret)).send({ botId: lead }).expect(201)).body as { id: string }).id;
    model.enqueue(toolCallReply('d1', 'ask_helper', ['{"input":"ask them"}'], [1, 1]), toolCallReply('u1', 'ask_user', ['{}'], [1, 1]));
    const turn = await sendMessage(t, chat.secret, leadChat, 'Delegate');
    await waitForEvent(t, chat.secret, turn.executionId, 'task.started');

    const children = await json<{ data: Array<{ id: string; kind: string; attached: boolean }> }>(['executions', 'children', turn.executionId]);
    expect(children.data).toEqual([expect.objectContaining({ kind: 'chat.turn', attached: true })]);
    const task = children.data[0]!.id;
    await waitForExecutionState(t, chat.secret, task, 'waiting');
    expect(await json(['executions', 'pause', turn.executionId])).toEqual({ id: turn.executionId, state: 'waiting', paused: true });
    // The task was paused with its parent and cannot be resumed on its own.
    const refused = await cli(['executions', 'resume', task]);
    expect({ code: refused.code === 0, stderr: refused.stderr }).toEqual({ code: false, stderr: expect.stringContaining('ParentPaused') });
    expect(await json(['executions', 'resume', turn.executionId])).toMatchObject({ id: turn.executionId, paused: false });
    expect(await ok(['executions', 'children', turn.executionId])).toContain(task);
    await t.http().post(`/v1/executions/${turn.executionId}/cancel`).set('authorization', bearer(chat.secret)).expect(202);
    expect((await eventsUntilEnd(t, chat.secret, turn.executionId)).at(-1)).toMatchObject({ state: 'cancelled' });
  });
});

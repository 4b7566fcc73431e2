import { Engine } from '@openbot/engine';
import { TurnHooks, type TurnHookContext } from '@openbot/features';
import { chunks, FakeOpenAiServer, heldStreamReply, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { addMember, bearer, createChatFixture, eventsUntilEnd, listMessages, sendMessage, type EventBody } from '../support/chat-fixture';
import { startServerEverything } from '../fakes/mcp-test-servers';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * A Turn whose checkpoint fails after its outside calls returned (STC-05): the run is dropped,
 * its lease runs out (1 s here) and a takeover at the next generation resumes from the last
 * checkpoint, reusing the saved model and tool results instead of calling again.
 */
describe('turn recovery', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let tools: FakeToolServer;

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_LEASE_SECONDS: '1' } });
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    fake = await FakeOpenAiServer.start();
    tools = await FakeToolServer.start();
  });
  afterEach(async () => {
    await fake.close();
    await tools.close();
  });

  it('[STC-05] a checkpoint that fails after the model and the tool answered: the takeover reuses both saved results', async () => {
    const chat = await createChatFixture(t, {
      baseUrl: fake.baseUrl,
      tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url: tools.url('/lookup'), retry: 'unsafe' }],
    });
    // The model's first answer waits until the fault is armed for this Turn alone: a checkpoint of
    // any other execution on the node must not take one of its two failures.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const toolCall = [chunks.role(), chunks.toolCallStart(0, 'call-1', 'lookup'), chunks.toolCallArgs(0, '{}'), chunks.finish('tool_calls'), chunks.usage(10, 2)];
    fake.enqueue(heldStreamReply(toolCall, { holdAfter: 0, release: held }), textReply(['All done'], [20, 3]));
    tools.enqueue(jsonReply(200, { modelOutput: 'result' }));
    const engine = t.app.get(Engine);

    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Go');
    // The checkpoints of step 1 (model) and step 2 (tool) each fail once, after their call saved its result.
    engine.faults.arm('checkpoint.before-commit', { kind: 'throw', error: new Error('injected checkpoint failure') }, { times: 2, when: (c) => c.executionId === turn.executionId });
    release();
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId, 30_000);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    const view = await t.http().get(`/v1/executions/${turn.executionId}`).set('authorization', bearer(chat.secret)).expect(200);
    expect((view.body as { generation: number }).generation).toBe(3);
    // Neither the model's step-1 answer nor the unsafe tool was asked for twice.
    expect(fake.requests).toHaveLength(2);
    expect(tools.requests).toHaveLength(1);
    expect(events.filter((e) => e.type === 'model.started').map((e) => [e.step, e.attempt])).toEqual([
      [1, 1],
      [2, 1],
    ]);
    const usage = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_records WHERE execution_id = $1', [turn.executionId]);
    expect(usage[0]!.n).toBe(2);
    expect((await listMessages(t, chat.secret, chat.chatId)).map((m) => [m.role, m.content])).toEqual([
      ['user', 'Go'],
      ['tool', 'result'],
      ['assistant', 'All done'],
    ]);
  });

  it('[STC-05] the Turn end checks the Turn too: an end whose Turn is no longer the advancing one of its Chat writes no reply', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const engine = t.app.get(Engine);
    engine.faults.arm('checkpoint.before-commit', { kind: 'pause', until: held });
    fake.enqueue(textReply(['stale reply'], [3, 1]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Hi');
    await fake.waitForRequests(1);
    // Meanwhile the Chat moved on: this Turn is no longer its advancing one.
    await t.database.query('UPDATE chats SET active_turn_id = NULL WHERE id = $1', [chat.chatId]);
    release();
    expect((await eventsUntilEnd(t, chat.secret, turn.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    expect((await listMessages(t, chat.secret, chat.chatId)).map((m) => m.role)).toEqual(['user']);
  });

  it('[STC-08] hooks run at named steps and deduplicate their writes on replay; a failing plugin cannot change the lifecycle', async () => {
    await t.database.query('CREATE TABLE IF NOT EXISTS plugin_log (execution_id uuid, point text, step int, detail text)');
    const seen: string[] = [];
    const hooks = t.app.get(TurnHooks);
    hooks.register({
      name: 'audit',
      points: ['turn.started', 'model.completed', 'tool.result'],
      async run(context: TurnHookContext) {
        seen.push(`${context.point}@${context.step}`);
        const detail = context.message?.content ?? context.toolResult?.modelOutput ?? '';
        await context.once('log', (tx) => tx.query('INSERT INTO plugin_log VALUES ($1, $2, $3, $4)', [context.executionId, context.point, context.step, detail]).then(() => undefined));
      },
    });
    hooks.register({
      name: 'broken',
      points: ['model.completed'],
      run: () => Promise.reject(new Error('plugin bug')),
    });
    const chat = await createChatFixture(t, {
      baseUrl: fake.baseUrl,
      tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url: tools.url('/lookup'), retry: 'safe' }],
    });
    fake.enqueue(toolCallReply('call-1', 'lookup', ['{}'], [10, 2]), textReply(['Answer'], [20, 3]));
    tools.enqueue(jsonReply(200, { modelOutput: 'looked up' }));
    // The model step's checkpoint fails once: the phase is replayed from the saved model result.
    t.app.get(Engine).faults.arm('checkpoint.before-commit', { kind: 'throw', error: new Error('injected') }, { when: (c) => c.step === 1 });

    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Go');
    expect((await eventsUntilEnd(t, chat.secret, turn.executionId, 30_000)).at(-1)).toMatchObject({ state: 'completed' });
    // The replay ran the step-1 hooks again, but their writes happened once.
    expect(seen.filter((s) => s === 'model.completed@1').length).toBe(2);
    const log = await t.database.query<{ point: string; step: number; detail: string }>('SELECT point, step, detail FROM plugin_log WHERE execution_id = $1 ORDER BY step, point', [turn.executionId]);
    expect(log).toEqual([
      { point: 'model.completed', step: 1, detail: '' },
      { point: 'tool.result', step: 1, detail: 'looked up' },
      { point: 'turn.started', step: 1, detail: '' },
      { point: 'model.completed', step: 2, detail: 'Answer' },
    ]);
    // The failing plugin has error records of its own; the Turn completed regardless.
    const errors = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM error_records WHERE execution_id = $1 AND origin LIKE 'turn plugin broken%'`, [turn.executionId]);
    expect(errors[0]!.n).toBeGreaterThanOrEqual(2);
  });

  it("[IDN-05] restored work goes through the same access rule as live work: a Turn taken over after its model step still refuses another member's own App connection, and still serves its member's", async () => {
    const everything = await startServerEverything();
    try {
      const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
      const app = (await t.http().post('/v1/apps').set('authorization', bearer(chat.secret)).send({ url: everything.url }).expect(201)).body as { id: string };
      const alice = await addMember(t, chat.organizationId);
      const bob = await addMember(t, chat.organizationId);
      const own = (await t.http().post(`/v1/apps/${app.id}/connections`).set('authorization', bearer(alice.secret)).send({ owner: 'member' }).expect(201)).body as { id: string };
      await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', bearer(alice.secret)).send({ tools: [{ kind: 'app', connectionId: own.id, tools: ['echo'] }] }).expect(200);
      const engine = t.app.get(Engine);

      /** A Turn of `member` whose model asks for echo; its step-1 checkpoint fails once, so a takeover restores it. */
      const restoredTurn = async (member: { secret: string }, text: string): Promise<EventBody[]> => {
        const chatId = ((await t.http().post('/v1/chats').set('authorization', bearer(member.secret)).send({ botId: chat.botId }).expect(201)).body as { id: string }).id;
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        const echo = [chunks.role(), chunks.toolCallStart(0, 'call-echo', 'echo'), chunks.toolCallArgs(0, JSON.stringify({ message: text })), chunks.finish('tool_calls'), chunks.usage(10, 2)];
        fake.enqueue(heldStreamReply(echo, { holdAfter: 0, release: held }), textReply(['Done'], [20, 3]));
        const turn = await sendMessage(t, member.secret, chatId, 'Echo');
        engine.faults.arm('checkpoint.before-commit', { kind: 'throw', error: new Error('injected checkpoint failure') }, { when: (c) => c.executionId === turn.executionId });
        release();
        const events = await eventsUntilEnd(t, member.secret, turn.executionId, 30_000);
        const view = await t.http().get(`/v1/executions/${turn.executionId}`).set('authorization', bearer(member.secret)).expect(200);
        expect(view.body).toMatchObject({ state: 'completed', generation: 2 });
        return events;
      };

      // Bob's restored Turn: the connection is Alice's own, refused as in live work (app-tools.spec.ts).
      const bobs = await restoredTurn(bob, 'from bob');
      expect(bobs.find((e) => e.type === 'tool.result')).toMatchObject({ isError: true, category: 'forbidden', errorId: expect.any(String) });
      // Alice's restored Turn: her own connection serves her work.
      const alices = await restoredTurn(alice, 'from alice');
      expect(alices.find((e) => e.type === 'tool.result')).toMatchObject({ isError: false });
      const lastToolMessage = (fake.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> }).messages.filter((m) => m.role === 'tool').at(-1)!;
      expect(lastToolMessage.content).toContain('from alice');
    } finally {
      await everything.close();
    }
  });
});

import { chunks, FakeOpenAiServer, heldStreamReply, textReply } from '../fakes/fake-openai-server';
import { addMember, bearer, createChatFixture, eventsUntilEnd, listMessages, sendMessage, waitForEvent, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Chat stop and delete are execution commands (RES-04): stop cancels the Chat's Turns and keeps
 * it open; delete closes admission at once, cancels linked work, waits for release through a
 * `chat.delete` execution and only then removes the rows.
 */
describe('chat stop and delete', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let chat: ChatFixture;
  const never = new Promise<void>(() => undefined);

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    fake = await FakeOpenAiServer.start();
    chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
  });
  afterEach(async () => {
    await fake.close();
  });

  const held = () => heldStreamReply([chunks.role(), chunks.text('streaming…'), chunks.text(' more'), chunks.finish('stop')], { holdAfter: 2, release: never });
  const state = async (id: string): Promise<string> =>
    ((await t.http().get(`/v1/executions/${id}`).set('authorization', bearer(chat.secret)).expect(200)).body as { state: string }).state;

  it('[EXE-01] a Turn and a deletion keep IDs of their own and point to their executions, stored work whose IDs stay the same and stay readable after the Chat is gone', async () => {
    const auth = bearer(chat.secret);
    fake.enqueue(textReply(['First answer.'], [5, 2]), textReply(['Second answer.'], [5, 2]));
    const first = await sendMessage(t, chat.secret, chat.chatId, 'First', 'exe-01-first');
    expect((await eventsUntilEnd(t, chat.secret, first.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    // The same command again answers the same Turn and the same execution, after its end too.
    expect(await sendMessage(t, chat.secret, chat.chatId, 'First', 'exe-01-first')).toEqual(first);
    const second = await sendMessage(t, chat.secret, chat.chatId, 'Second');
    expect((await eventsUntilEnd(t, chat.secret, second.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    const ids = [first.turnId, first.executionId, second.turnId, second.executionId];
    expect(new Set(ids).size).toBe(4);

    // The Turn's own row points to its execution; the execution names the Turn as its resource.
    const turns = await t.database.query<{ id: string; execution_id: string }>('SELECT id, execution_id FROM chat_turns WHERE chat_id = $1 ORDER BY seq', [chat.chatId]);
    expect(turns).toEqual([
      { id: first.turnId, execution_id: first.executionId },
      { id: second.turnId, execution_id: second.executionId },
    ]);
    for (const turn of [first, second]) {
      const view = await t.http().get(`/v1/executions/${turn.executionId}`).set('authorization', auth).expect(200);
      expect(view.body).toMatchObject({ id: turn.executionId, state: 'completed', resource: { type: 'turn', id: turn.turnId } });
    }
    // Its messages carry the Turn's ID, not the execution's.
    const messages = await listMessages(t, chat.secret, chat.chatId);
    expect(messages.map((m) => [m.role, m.content, m.turnId])).toEqual([
      ['user', 'First', first.turnId],
      ['assistant', 'First answer.', first.turnId],
      ['user', 'Second', second.turnId],
      ['assistant', 'Second answer.', second.turnId],
    ]);

    // A deletion: the Chat keeps its ID, the deletion is an execution of its own that names it.
    const deleted = await t.http().delete(`/v1/chats/${chat.chatId}`).set('authorization', auth).expect(202);
    const deleteId = (deleted.body as { executionId: string }).executionId;
    expect([chat.chatId, ...ids]).not.toContain(deleteId);
    expect((await eventsUntilEnd(t, chat.secret, deleteId)).at(-1)).toMatchObject({ state: 'completed' });
    await t.http().get(`/v1/chats/${chat.chatId}`).set('authorization', auth).expect(404);
    const deletion = await t.http().get(`/v1/executions/${deleteId}`).set('authorization', auth).expect(200);
    expect(deletion.body).toMatchObject({ id: deleteId, kind: 'chat.delete', state: 'completed', resource: { type: 'chat', id: chat.chatId } });
    // The Turns' executions outlive the Chat's rows under the same IDs, still naming their Turns.
    for (const turn of [first, second]) {
      const view = await t.http().get(`/v1/executions/${turn.executionId}`).set('authorization', auth).expect(200);
      expect(view.body).toMatchObject({ id: turn.executionId, state: 'completed', resource: { type: 'turn', id: turn.turnId } });
    }
  });

  it('[RES-04] delete during a stream: admission closes at once, the Turn is cancelled and released, then the Chat is gone', async () => {
    fake.enqueue(held());
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Tell me a long story');
    await waitForEvent(t, chat.secret, turn.executionId, 'text.delta');
    const deleted = await t.http().delete(`/v1/chats/${chat.chatId}`).set('authorization', bearer(chat.secret));
    expect(deleted.status).toBe(202);
    const deleteId = (deleted.body as { executionId: string }).executionId;
    // Closed for input and invisible right away, before the release finished.
    await t.http().get(`/v1/chats/${chat.chatId}`).set('authorization', bearer(chat.secret)).expect(404);
    const late = await t.http().post(`/v1/chats/${chat.chatId}/messages`).set('authorization', bearer(chat.secret)).send({ content: 'wait' });
    expect(late.status).toBe(404);
    // A second delete finds no Chat either.
    const again = await t.http().delete(`/v1/chats/${chat.chatId}`).set('authorization', bearer(chat.secret));
    expect(again.status).toBe(404);

    const turnEvents = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(turnEvents.at(-1)).toMatchObject({ state: 'cancelled' });
    const deleteEvents = await eventsUntilEnd(t, chat.secret, deleteId);
    expect(deleteEvents.at(-1)).toMatchObject({ state: 'completed' });
    const rows = await t.database.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM chats WHERE id = $1) + (SELECT count(*) FROM chat_turns WHERE chat_id = $1) + (SELECT count(*) FROM chat_messages WHERE chat_id = $1) AS n`,
      [chat.chatId],
    );
    expect(Number(rows[0]!.n)).toBe(0);
    const view = await t.http().get(`/v1/executions/${deleteId}`).set('authorization', bearer(chat.secret)).expect(200);
    expect(view.body).toMatchObject({ kind: 'chat.delete', resource: { type: 'chat', id: chat.chatId } });
    // No polling: the delete waited for the Turn's end (its end transaction woke it), never on a timer.
    const timers = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM execution_timers WHERE execution_id = $1', [deleteId]);
    expect(timers[0]!.n).toBe(0);
    // The cancel was a command of the delete's own checkpoint: one cancel request, nothing left pending.
    const cancels = await t.database.query<{ consumed: boolean }>(`SELECT consumed_at IS NOT NULL AS consumed FROM execution_signals WHERE execution_id = $1 AND name = 'cancel'`, [turn.executionId]);
    expect(cancels).toEqual([{ consumed: true }]);
  });

  it('[RES-04] delete cancels queued Turns too, and the delete waits until each has released', async () => {
    fake.enqueue(held());
    const other = await addMember(t, chat.organizationId);
    const running = await sendMessage(t, chat.secret, chat.chatId, 'first');
    await waitForEvent(t, chat.secret, running.executionId, 'text.delta');
    const queued = await sendMessage(t, other.secret, chat.chatId, 'second');
    expect(queued.admission).toBe('queued');
    const deleted = await t.http().delete(`/v1/chats/${chat.chatId}`).set('authorization', bearer(chat.secret)).expect(202);
    const deleteId = (deleted.body as { executionId: string }).executionId;
    expect((await eventsUntilEnd(t, chat.secret, deleteId)).at(-1)).toMatchObject({ state: 'completed' });
    expect(await state(running.executionId)).toBe('cancelled');
    expect(await state(queued.executionId)).toBe('cancelled');
    // The queued Turn never reached the model.
    expect(fake.requests).toHaveLength(1);
  });

  it('[RES-04] stop cancels the running and the queued Turns; the Chat stays open and takes the next message', async () => {
    fake.enqueue(held(), textReply(['after stop'], [2, 1]));
    const other = await addMember(t, chat.organizationId);
    const running = await sendMessage(t, chat.secret, chat.chatId, 'first');
    await waitForEvent(t, chat.secret, running.executionId, 'text.delta');
    const queued = await sendMessage(t, other.secret, chat.chatId, 'second');
    const stopped = await t.http().post(`/v1/chats/${chat.chatId}/stop`).set('authorization', bearer(chat.secret));
    expect(stopped.status).toBe(202);
    expect((stopped.body as { executionIds: string[] }).executionIds.sort()).toEqual([running.executionId, queued.executionId].sort());
    expect((await eventsUntilEnd(t, chat.secret, running.executionId)).at(-1)).toMatchObject({ state: 'cancelled' });
    expect((await eventsUntilEnd(t, chat.secret, queued.executionId)).at(-1)).toMatchObject({ state: 'cancelled' });
    const next = await sendMessage(t, chat.secret, chat.chatId, 'again');
    expect(next.admission).toBe('started');
    expect((await eventsUntilEnd(t, chat.secret, next.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    // Stop and delete of an unknown or foreign Chat are 404.
    const stranger = await t.createOrganization('Stranger');
    await t.http().post(`/v1/chats/${chat.chatId}/stop`).set('authorization', bearer(stranger.secret)).expect(404);
    await t.http().delete(`/v1/chats/${chat.chatId}`).set('authorization', bearer(stranger.secret)).expect(404);
    await t.http().delete('/v1/chats/not-a-uuid').set('authorization', bearer(chat.secret)).expect(404);
  });
});

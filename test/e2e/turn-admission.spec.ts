import { chunks, FakeOpenAiServer, heldStreamReply, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, delayedJsonReply } from '../fakes/fake-tool-server';
import {
  addMember,
  bearer,
  createChatFixture,
  eventsUntilEnd,
  listMessages,
  replyText,
  sendMessage,
  waitForEvent,
  type ChatFixture,
} from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * How a Chat admits input (docs/execution-model.md "Chats and Turns", docs/http-api.md "Idempotency"): message commands with Idempotency-Key,
 * one advancing Turn at a time under the Chat's row lock, steering by the same identity,
 * queueing for anyone else, and the next Turn admitted with the previous one's end.
 */

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A text reply held open after its first text chunk until `release` resolves. */
function heldText(parts: readonly string[], release: Promise<void>) {
  return heldStreamReply([chunks.role(), ...parts.map(chunks.text), chunks.finish('stop'), chunks.usage(5, 2)], { holdAfter: 2, release });
}

/** The user-visible text of the messages a model request carried, role by role. */
function promptOf(body: { messages: Array<{ role: string; content: string | null }> }): string[] {
  return body.messages.map((m) => `${m.role}:${m.content ?? ''}`);
}

describe('turn admission', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let tools: FakeToolServer;
  let chat: ChatFixture;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });
  // A fresh model and tool server per test: no script or request of one test reaches another.
  beforeEach(async () => {
    fake = await FakeOpenAiServer.start();
    tools = await FakeToolServer.start();
    chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
  });
  afterEach(async () => {
    await fake.close();
    await tools.close();
  });

  const executionState = async (id: string): Promise<string> => {
    const res = await t.http().get(`/v1/executions/${id}`).set('authorization', bearer(chat.secret)).expect(200);
    return (res.body as { state: string }).state;
  };

  it('[EXE-02] the same Idempotency-Key and body answer the same ids, also while the first request is in flight', async () => {
    fake.fallback = textReply(['once'], [3, 1]);
    const sends = await Promise.all([1, 2, 3, 4].map(() => sendMessage(t, chat.secret, chat.chatId, 'Hi', 'key-1')));
    for (const send of sends) expect(send).toEqual(sends[0]);
    expect(sends[0]!.admission).toBe('started');
    await eventsUntilEnd(t, chat.secret, sends[0]!.executionId);
    // After the end too, and with the keys of the body in another order.
    const later = await t.http().post(`/v1/chats/${chat.chatId}/messages`).set('authorization', bearer(chat.secret)).set('idempotency-key', 'key-1').send({ content: 'Hi' });
    expect(later.status).toBe(202);
    expect(later.body).toEqual(sends[0]);
    const users = (await listMessages(t, chat.secret, chat.chatId)).filter((m) => m.role === 'user');
    expect(users).toHaveLength(1);
  });

  it('[EXE-02] the same key with another body is 409 CommandKeyConflict; keys are scoped to the caller and the Chat', async () => {
    fake.fallback = textReply(['ok'], [3, 1]);
    const first = await sendMessage(t, chat.secret, chat.chatId, 'Hi', 'key-2');
    const conflict = await t.http().post(`/v1/chats/${chat.chatId}/messages`).set('authorization', bearer(chat.secret)).set('idempotency-key', 'key-2').send({ content: 'Other' });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ type: 'CommandKeyConflict' });
    await eventsUntilEnd(t, chat.secret, first.executionId);
    // Another member using the same key makes a command of its own.
    const other = await addMember(t, chat.organizationId);
    const theirs = await sendMessage(t, other.secret, chat.chatId, 'Other', 'key-2');
    expect(theirs.messageId).not.toBe(first.messageId);
    await eventsUntilEnd(t, chat.secret, theirs.executionId);
    const bad = await t.http().post(`/v1/chats/${chat.chatId}/messages`).set('authorization', bearer(chat.secret)).set('idempotency-key', 'has space').send({ content: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: 'InvalidInput', issues: [{ path: 'Idempotency-Key' }] });
  });

  it('[STC-02] concurrent sends from two identities: one Turn starts, the other queues (execution queued) and starts only after the first ended', async () => {
    const release = deferred();
    fake.enqueue(heldText(['First ', 'answer'], release.promise), textReply(['Second answer'], [7, 2]));
    const other = await addMember(t, chat.organizationId);
    const [a, b] = await Promise.all([sendMessage(t, chat.secret, chat.chatId, 'from A'), sendMessage(t, other.secret, chat.chatId, 'from B')]);
    const admissions = [a.admission, b.admission].sort();
    expect(admissions).toEqual(['queued', 'started']);
    const [running, queued] = a.admission === 'started' ? [a, b] : [b, a];
    await waitForEvent(t, chat.secret, running.executionId, 'text.delta');
    expect(await executionState(queued.executionId)).toBe('queued');
    expect(fake.requests).toHaveLength(1);
    release.resolve();
    expect((await eventsUntilEnd(t, chat.secret, running.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    const second = await eventsUntilEnd(t, chat.secret, queued.executionId);
    expect(second.at(-1)).toMatchObject({ state: 'completed' });
    expect(replyText(second)).toBe('Second answer');
    // The queued Turn saw the first Turn's reply as history.
    expect(promptOf(fake.requests[1]!.body)).toContain('assistant:First answer');
    const messages = await listMessages(t, chat.secret, chat.chatId);
    expect(messages.filter((m) => m.role === 'assistant').map((m) => [m.turnId, m.content])).toEqual([
      [running.turnId, 'First answer'],
      [queued.turnId, 'Second answer'],
    ]);
  });

  it('[STC-03] queued input keeps its own identity and place: Turns start in the order they were admitted', async () => {
    const release = deferred();
    fake.enqueue(heldText(['one'], release.promise), textReply(['two']), textReply(['three']), textReply(['four']));
    const b = await addMember(t, chat.organizationId);
    const c = await addMember(t, chat.organizationId);
    const first = await sendMessage(t, chat.secret, chat.chatId, 'A1');
    await waitForEvent(t, chat.secret, first.executionId, 'text.delta');
    const q1 = await sendMessage(t, b.secret, chat.chatId, 'B1');
    const q2 = await sendMessage(t, c.secret, chat.chatId, 'C1');
    const q3 = await sendMessage(t, b.secret, chat.chatId, 'B2');
    expect([q1, q2, q3].map((q) => q.admission)).toEqual(['queued', 'queued', 'queued']);
    expect(new Set([q1.turnId, q2.turnId, q3.turnId]).size).toBe(3);
    release.resolve();
    for (const q of [first, q1, q2, q3]) expect((await eventsUntilEnd(t, chat.secret, q.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    // Each model request's newest user input is its own Turn's, in admission order.
    expect(fake.requests.map((r) => promptOf(r.body as never).filter((m) => m.startsWith('user:')).at(-1))).toEqual(['user:A1', 'user:B1', 'user:C1', 'user:B2']);
    const rows = await t.database.query<{ scope_id: string }>(`SELECT scope_id FROM chat_turns WHERE chat_id = $1 ORDER BY seq`, [chat.chatId]);
    expect(rows.map((r) => r.scope_id)).toEqual([chat.memberId, b.memberId, c.memberId, b.memberId]);
  });

  it('[STC-03] input from the same identity while its Turn runs steers it: the next model step reads it', async () => {
    const bot = await createChatFixture(t, {
      baseUrl: fake.baseUrl,
      tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url: tools.url('/lookup'), retry: 'safe' }],
    });
    chat = bot;
    tools.enqueue(delayedJsonReply(800, 200, { modelOutput: 'found it' }));
    fake.enqueue(toolCallReply('call-1', 'lookup', ['{"q":', '"x"}'], [10, 3]), textReply(['Done, with your note'], [20, 4]));
    const first = await sendMessage(t, chat.secret, chat.chatId, 'Look it up');
    await waitForEvent(t, chat.secret, first.executionId, 'tool.called');
    const steer = await sendMessage(t, chat.secret, chat.chatId, 'also check y');
    expect(steer).toMatchObject({ admission: 'steered', turnId: first.turnId, executionId: first.executionId });
    const events = await eventsUntilEnd(t, chat.secret, first.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    expect(promptOf(fake.requests.at(-1)!.body as never).slice(-3)).toEqual(['assistant:', 'tool:found it', 'user:also check y']);
    const messages = await listMessages(t, chat.secret, chat.chatId);
    expect(messages.map((m) => [m.role, m.turnId === first.turnId])).toEqual([
      ['user', true],
      ['user', true],
      ['tool', true],
      ['assistant', true],
    ]);
  });

  it("[STC-03] steering that arrives during the Turn's final model call is read by one more step of that Turn: the 202 names the Turn that answers it", async () => {
    const release = deferred();
    fake.enqueue(heldText(['Final'], release.promise), textReply(['About your note']));
    const first = await sendMessage(t, chat.secret, chat.chatId, 'Hello');
    await waitForEvent(t, chat.secret, first.executionId, 'text.delta');
    const steer = await sendMessage(t, chat.secret, chat.chatId, 'one more thing');
    expect(steer).toMatchObject({ admission: 'steered', turnId: first.turnId, executionId: first.executionId });
    release.resolve();
    const events = await eventsUntilEnd(t, chat.secret, first.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed', stop: null });
    // The Turn the answer named made the second model call, and that call read the steering input.
    expect(events.filter((e) => e.type === 'model.started').map((e) => e.step)).toEqual([1, 2]);
    expect(promptOf(fake.requests[1]!.body as never).slice(-3)).toEqual(['user:Hello', 'assistant:Final', 'user:one more thing']);
    const turns = await t.database.query<{ id: string }>(`SELECT id FROM chat_turns WHERE chat_id = $1`, [chat.chatId]);
    expect(turns.map((turn) => turn.id)).toEqual([first.turnId]);
    const messages = await listMessages(t, chat.secret, chat.chatId);
    expect(messages.map((m) => [m.role, m.content, m.turnId === first.turnId])).toEqual([
      ['user', 'Hello', true],
      ['user', 'one more thing', true],
      ['assistant', 'Final', true],
      ['assistant', 'About your note', true],
    ]);
  });

  it('[STC-03] a Turn in its last allowed step takes no steering: the input is queued with its own Turn and execution, which answer it', async () => {
    chat = await createChatFixture(t, { baseUrl: fake.baseUrl, limits: { maxSteps: 1 } });
    const release = deferred();
    fake.enqueue(heldText(['Final'], release.promise), textReply(['About your note']));
    const first = await sendMessage(t, chat.secret, chat.chatId, 'Hello');
    await waitForEvent(t, chat.secret, first.executionId, 'text.delta');
    const late = await sendMessage(t, chat.secret, chat.chatId, 'one more thing');
    expect(late.admission).toBe('queued');
    expect(late.turnId).not.toBe(first.turnId);
    expect(late.executionId).not.toBe(first.executionId);
    release.resolve();
    expect(replyText(await eventsUntilEnd(t, chat.secret, first.executionId))).toBe('Final');
    // The execution the answer named runs the Turn that reads it, with the first Turn's reply as history.
    expect(replyText(await eventsUntilEnd(t, chat.secret, late.executionId))).toBe('About your note');
    expect(promptOf(fake.requests[1]!.body as never).slice(-3)).toEqual(['user:Hello', 'assistant:Final', 'user:one more thing']);
    const messages = await listMessages(t, chat.secret, chat.chatId);
    expect(messages.map((m) => [m.role, m.content, m.turnId])).toEqual([
      ['user', 'Hello', first.turnId],
      ['user', 'one more thing', late.turnId],
      ['assistant', 'Final', first.turnId],
      ['assistant', 'About your note', late.turnId],
    ]);
  });

  it('[STC-03] a Turn whose output tokens are spent takes no steering while its last tools run: the input is queued with its own Turn', async () => {
    chat = await createChatFixture(t, {
      baseUrl: fake.baseUrl,
      tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url: tools.url('/lookup'), retry: 'safe' }],
      limits: { maxOutputTokens: 50 },
    });
    tools.enqueue(delayedJsonReply(800, 200, { modelOutput: 'found it' }));
    fake.enqueue(toolCallReply('call-1', 'lookup', ['{}'], [10, 60]), textReply(['About your note']));
    const first = await sendMessage(t, chat.secret, chat.chatId, 'Look it up');
    await waitForEvent(t, chat.secret, first.executionId, 'tool.called');
    const late = await sendMessage(t, chat.secret, chat.chatId, 'also check y');
    expect(late.admission).toBe('queued');
    expect(late.executionId).not.toBe(first.executionId);
    expect((await eventsUntilEnd(t, chat.secret, first.executionId)).at(-1)).toMatchObject({ state: 'completed', stop: 'max-output-tokens' });
    expect(replyText(await eventsUntilEnd(t, chat.secret, late.executionId))).toBe('About your note');
    expect(promptOf(fake.requests[1]!.body as never).at(-1)).toBe('user:also check y');
    expect((await listMessages(t, chat.secret, chat.chatId)).find((m) => m.content === 'also check y')?.turnId).toBe(late.turnId);
  });

  it('[STC-04] the next queued Turn is admitted in the transaction that ends the previous one, after its reply is committed: at every moment the old Turn or the queued one is active, never none', async () => {
    const witness = await installAdmissionWitness();
    try {
      const releaseA = deferred();
      const releaseB = deferred();
      fake.enqueue(heldText(['A reply'], releaseA.promise), heldText(['B reply'], releaseB.promise));
      const b = await addMember(t, chat.organizationId);
      const first = await sendMessage(t, chat.secret, chat.chatId, 'A');
      await waitForEvent(t, chat.secret, first.executionId, 'text.delta');
      const queued = await sendMessage(t, b.secret, chat.chatId, 'B');
      expect(queued.admission).toBe('queued');
      const active = async () => (await t.database.query<{ active_turn_id: string | null }>('SELECT active_turn_id FROM chats WHERE id = $1', [chat.chatId]))[0]!.active_turn_id;
      expect(await active()).toBe(first.turnId);

      releaseA.resolve();
      await eventsUntilEnd(t, chat.secret, first.executionId);
      // A has ended and B is held in its model step: B is the active Turn, and it read A's reply.
      await fake.waitForRequests(2);
      expect(await active()).toBe(queued.turnId);
      expect(await executionState(queued.executionId)).toBe('running');
      expect(promptOf(fake.requests[1]!.body)).toContain('assistant:A reply');

      releaseB.resolve();
      await eventsUntilEnd(t, chat.secret, queued.executionId);
      expect(await active()).toBeNull();
      // Every committed change, by transaction: A's end, its reply, B's start and the active Turn
      // moving from A to B are one commit, so no reader ever saw no active Turn while B was queued.
      // (Inside one transaction the order is not visible to any reader; the sets are compared.)
      const name = (id: string | null) => (id === first.turnId ? 'A' : id === queued.turnId ? 'B' : String(id));
      expect((await witness.read(chat.chatId)).map((tx) => tx.map((change) => `${change.what} ${name(change.turnId)}`).sort())).toEqual([
        ['active A'],
        ['active B', 'ended A', 'reply A', 'running B'],
        ['active null', 'ended B', 'reply B'],
      ]);
    } finally {
      await witness.remove();
    }
  });

  /**
   * Records, by transaction, each change of a Chat's active Turn, each Turn state change and each
   * stored assistant reply: what commits together shares one transaction ID.
   */
  async function installAdmissionWitness(): Promise<{ read(chatId: string): Promise<Array<Array<{ what: string; turnId: string | null }>>>; remove(): Promise<void> }> {
    await t.database.query(`CREATE TABLE admission_witness (seq bigserial, tx bigint NOT NULL DEFAULT txid_current(), chat_id uuid NOT NULL, what text NOT NULL, turn_id uuid)`);
    await t.database.query(`CREATE FUNCTION admission_witness() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_TABLE_NAME = 'chats' THEN
          INSERT INTO admission_witness (chat_id, what, turn_id) VALUES (NEW.id, 'active', NEW.active_turn_id);
        ELSIF TG_TABLE_NAME = 'chat_turns' THEN
          INSERT INTO admission_witness (chat_id, what, turn_id) VALUES (NEW.chat_id, NEW.state, NEW.id);
        ELSE
          INSERT INTO admission_witness (chat_id, what, turn_id) VALUES (NEW.chat_id, 'reply', NEW.turn_id);
        END IF;
        RETURN NEW;
      END $$`);
    await t.database.query(`CREATE TRIGGER admission_witness AFTER UPDATE ON chats FOR EACH ROW
      WHEN (OLD.active_turn_id IS DISTINCT FROM NEW.active_turn_id) EXECUTE FUNCTION admission_witness()`);
    await t.database.query(`CREATE TRIGGER admission_witness AFTER UPDATE ON chat_turns FOR EACH ROW
      WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION admission_witness()`);
    await t.database.query(`CREATE TRIGGER admission_witness AFTER INSERT ON chat_messages FOR EACH ROW
      WHEN (NEW.role = 'assistant') EXECUTE FUNCTION admission_witness()`);
    return {
      async read(chatId) {
        const rows = await t.database.query<{ tx: string; what: string; turn_id: string | null }>('SELECT tx::text AS tx, what, turn_id FROM admission_witness WHERE chat_id = $1 ORDER BY seq', [chatId]);
        const byTx = new Map<string, Array<{ what: string; turnId: string | null }>>();
        for (const row of rows) byTx.set(row.tx, [...(byTx.get(row.tx) ?? []), { what: row.what, turnId: row.turn_id }]);
        return [...byTx.values()];
      },
      async remove() {
        for (const table of ['chats', 'chat_turns', 'chat_messages']) await t.database.query(`DROP TRIGGER IF EXISTS admission_witness ON ${table}`);
        await t.database.query('DROP FUNCTION IF EXISTS admission_witness()');
        await t.database.query('DROP TABLE IF EXISTS admission_witness');
      },
    };
  }
});

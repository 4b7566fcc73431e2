import { newId } from '@openbot/domain';
import { chunks, FakeOpenAiServer, heldStreamReply, statusReply, textReply } from '../fakes/fake-openai-server';
import { MEMORY_LOCK_NAMESPACE } from '../../libs/features/src/memory/memory-locks';
import { expectDeclared, issuePaths } from '../support/api-assertions';
import { waitForExecutionState } from '../support/tool-probes';
import { addMember, bearer, createChatFixture, eventsUntilEnd, sendMessage, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * A Turn of a Bot with memory (decision 030): memory selects the context (the Turn never reads
 * the pool), the Turn emits `memory.read` with the IDs it used before its first model call, and
 * a Bot that learns gets a learning execution after each Turn, a model call through the one
 * model-call path, whose ID is announced in `memory.learning` just before `execution.ended`.
 */

interface ExecutionEvent {
  type: string;
  ids?: string[];
  executionId?: string;
  [field: string]: unknown;
}

describe('turn memory', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let chat: ChatFixture;

  const auth = () => bearer(chat.secret);
  async function remember(body: Record<string, unknown>): Promise<string> {
    const res = await t.http().post(`/v1/bots/${chat.botId}/memories`).set('authorization', auth()).send(body).expect(201);
    return (res.body as { id: string }).id;
  }
  async function setMemory(memory: { enabled: boolean; learn: boolean; learnAccess?: string }): Promise<void> {
    await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', auth()).send({ memory }).expect(200);
  }
  /** The system text of the model request at `index`. */
  const systemText = (index: number): string =>
    (fake.requests[index]!.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'system').map((m) => m.content).join('\n');

  beforeAll(async () => {
    t = await startTestApp();
    fake = await FakeOpenAiServer.start();
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  beforeEach(async () => {
    chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
  });

  it('[MEM-01] [MEM-03] the Turn gets what memory selects for its member, announced once in memory.read before model.started', async () => {
    await setMemory({ enabled: true, learn: false });
    const other = await addMember(t, chat.organizationId);
    const invoices = await remember({ content: 'Invoices go to billing@acme.test in kroner', tags: ['invoice'] });
    const words = await remember({ content: 'The invoice portal closes on Fridays' });
    const unrelated = await remember({ content: 'The office plant is called Gerald' });
    const notForThisMember = await remember({ content: 'Invoice approvals need the CFO', access: { kind: 'members', ids: [other.memberId] } });
    const archived = await remember({ content: 'Old invoice address: PO Box 1', tags: ['invoice'] });
    await t.http().patch(`/v1/bots/${chat.botId}/memories/${archived}`).set('authorization', auth()).send({ status: 'archived' }).expect(200);
    // A chat source that is gone hides its item.
    const goneChat = await t.http().post('/v1/chats').set('authorization', auth()).send({ botId: chat.botId }).expect(201);
    const fromGoneChat = await remember({ content: 'Invoice numbers start at 9000', sources: [{ type: 'chat', id: (goneChat.body as { id: string }).id }] });
    await t.database.query('UPDATE chats SET closed_at = now() WHERE id = $1', [(goneChat.body as { id: string }).id]);

    fake.enqueue(textReply(['Send it to billing.'], [20, 4]));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Where do I send the invoice?');
    const events = (await eventsUntilEnd(t, chat.secret, admitted.executionId)) as ExecutionEvent[];
    const types = events.map((e) => e.type);
    expect(types.filter((type) => type === 'memory.read')).toHaveLength(1);
    expect(types.indexOf('memory.read')).toBeLessThan(types.indexOf('model.started'));
    const read = events.find((e) => e.type === 'memory.read')!;
    // The tag match ranks first; the word match follows; nothing else is selected.
    expect(read.ids).toEqual([invoices, words]);
    for (const id of [unrelated, notForThisMember, archived, fromGoneChat]) expect(read.ids).not.toContain(id);
    const system = systemText(fake.requests.length - 1);
    expect(system).toContain('Invoices go to billing@acme.test in kroner');
    expect(system).toContain('The invoice portal closes on Fridays');
    expect(system).not.toContain('Gerald');
    expect(system).not.toContain('CFO');
    expect(system).not.toContain('PO Box');
    expect(system).not.toContain('9000');
  });

  it("[MEM-01] a roles rule includes the roles above it: an owner's Turn selects admin, member and viewer items, a member's Turn only member and viewer ones", async () => {
    await setMemory({ enabled: true, learn: false });
    const forAdmins = await remember({ content: 'Quarterly targets: admins see the forecast', tags: ['forecast'], access: { kind: 'roles', roles: ['admin'] } });
    const forMembers = await remember({ content: 'Forecast reviews happen on Thursdays', tags: ['forecast'], access: { kind: 'roles', roles: ['member'] } });
    const forViewers = await remember({ content: 'The forecast dashboard is read-only', tags: ['forecast'], access: { kind: 'roles', roles: ['viewer'] } });
    const forOwners = await remember({ content: 'Forecast sign-off is by the owners', tags: ['forecast'], access: { kind: 'roles', roles: ['owner'] } });
    // The fixture's member is the organization's owner.
    fake.enqueue(textReply(['Here is the forecast.'], [20, 4]));
    const asOwner = await sendMessage(t, chat.secret, chat.chatId, 'What about the forecast?');
    const ownerEvents = (await eventsUntilEnd(t, chat.secret, asOwner.executionId)) as ExecutionEvent[];
    expect([...ownerEvents.find((e) => e.type === 'memory.read')!.ids!].sort()).toEqual([forAdmins, forMembers, forViewers, forOwners].sort());
    expect(systemText(fake.requests.length - 1)).toContain('admins see the forecast');
    // A member is neither an admin nor an owner.
    const member = await addMember(t, chat.organizationId, 'member');
    const memberChat = await t.http().post('/v1/chats').set('authorization', bearer(member.secret)).send({ botId: chat.botId }).expect(201);
    fake.enqueue(textReply(['Thursdays.'], [20, 4]));
    const asMember = await sendMessage(t, member.secret, (memberChat.body as { id: string }).id, 'What about the forecast?');
    const memberEvents = (await eventsUntilEnd(t, member.secret, asMember.executionId)) as ExecutionEvent[];
    expect([...memberEvents.find((e) => e.type === 'memory.read')!.ids!].sort()).toEqual([forMembers, forViewers].sort());
    expect(systemText(fake.requests.length - 1)).not.toContain('admins see the forecast');
  });

  it('a Bot without memory enabled emits no memory.read and its prompt holds no memories', async () => {
    await remember({ content: 'Invoices go to billing@acme.test' , tags: ['invoice'] });
    fake.enqueue(textReply(['Ok.'], [5, 1]));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'invoice?');
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
    expect(events.map((e) => e.type)).toEqual(['model.started', 'text.delta', 'model.completed', 'execution.ended']);
    expect(systemText(fake.requests.length - 1)).not.toContain('billing@acme.test');
  });

  it('[FW-03] a learning Bot: memory.learning names an execution that learns through the model-call path and the call log', async () => {
    await setMemory({ enabled: true, learn: true });
    fake.enqueue(textReply(['Noted, Oslo it is.'], [10, 3]));
    fake.enqueue(textReply(['{"memories":[{"content":"The user lives in Oslo","tags":["Home"]}]}'], [30, 12]));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'I live in Oslo, remember that.');
    const events = (await eventsUntilEnd(t, chat.secret, admitted.executionId)) as ExecutionEvent[];
    expect(events.slice(-2).map((e) => e.type)).toEqual(['memory.learning', 'execution.ended']);
    const learningId = events.at(-2)!.executionId!;
    const learning = (await eventsUntilEnd(t, chat.secret, learningId)) as ExecutionEvent[];
    expect(learning.map((e) => e.type)).toEqual(['model.started', 'model.completed', 'execution.ended']);
    expect(learning.at(-1)).toMatchObject({ state: 'completed' });
    // The learner read the Turn's messages and nothing of memory's pool.
    const prompt = JSON.stringify(fake.requests.at(-1)!.body.messages);
    expect(prompt).toContain('I live in Oslo, remember that.');
    expect(prompt).toContain('Noted, Oslo it is.');
    // Its model call is in the common call log, with a usage record billed to the Turn's member.
    const calls = await t.database.query<{ kind: string; status: string }>('SELECT kind, status FROM execution_calls WHERE execution_id = $1', [learningId]);
    expect(calls).toEqual([{ kind: 'model', status: 'succeeded' }]);
    const usage = await t.database.query<{ scope_id: string; turn_id: string }>('SELECT scope_id, turn_id FROM usage_records WHERE execution_id = $1', [learningId]);
    expect(usage).toEqual([{ scope_id: chat.memberId, turn_id: admitted.turnId }]);
    // The item: learned with its sources; the cursor moved to the Turn's last message; the permit is back.
    const list = await t.http().get(`/v1/bots/${chat.botId}/memories?q=oslo`).set('authorization', auth()).expect(200);
    const items = (list.body as { data: Array<{ id: string; tags: string[]; sources: unknown[] }> }).data;
    expect(items).toEqual([expect.objectContaining({ tags: ['home'], sources: [{ type: 'chat', id: chat.chatId }, { type: 'turn', id: admitted.turnId }] })]);
    const [cursor] = await t.database.query<{ position: string }>('SELECT position::text FROM memory_cursors WHERE bot_id = $1 AND chat_id = $2', [chat.botId, chat.chatId]);
    expect(cursor!.position).toBe('2');
    expect(await t.database.query('SELECT * FROM memory_permits WHERE execution_id = $1', [learningId])).toEqual([]);
    // The next Turn selects what was learned.
    fake.enqueue(textReply(['Oslo.'], [10, 1]));
    fake.enqueue(textReply(['{"memories":[]}'], [10, 1]));
    const next = await sendMessage(t, chat.secret, chat.chatId, 'Where do I live? Oslo?');
    const nextEvents = (await eventsUntilEnd(t, chat.secret, next.executionId)) as ExecutionEvent[];
    expect(nextEvents.find((e) => e.type === 'memory.read')!.ids).toEqual([items[0]!.id]);
    await eventsUntilEnd(t, chat.secret, nextEvents.at(-2)!.executionId!);
  });

  /** Runs a learning Turn of `secret` in `chatId` to its end and its learner to its end; answers the Turn. */
  async function learnFrom(secret: string, chatId: string, message: string, learned: string): Promise<{ turnId: string; read: string[] }> {
    fake.enqueue(textReply(['Noted.'], [10, 2]));
    fake.enqueue(textReply([JSON.stringify({ memories: [{ content: learned }] })], [20, 8]));
    const admitted = await sendMessage(t, secret, chatId, message);
    const events = (await eventsUntilEnd(t, secret, admitted.executionId)) as ExecutionEvent[];
    expect(events.slice(-2).map((e) => e.type)).toEqual(['memory.learning', 'execution.ended']);
    const learning = await eventsUntilEnd(t, secret, events.at(-2)!.executionId!);
    expect(learning.at(-1)).toMatchObject({ state: 'completed' });
    return { turnId: admitted.turnId, read: events.find((e) => e.type === 'memory.read')?.ids ?? [] };
  }
  /** The access rules of the items learned from a Turn. */
  const learnedAccess = async (turnId: string): Promise<unknown[]> =>
    (await t.database.query<{ access: unknown }>(`SELECT access FROM memory_items WHERE sources @> $1::jsonb`, [JSON.stringify([{ type: 'turn', id: turnId }])])).map((r) => r.access);

  it("[MEM-01] what a Turn teaches is its member's alone: another member's Turns do not select it and their search does not find it", async () => {
    await setMemory({ enabled: true, learn: true });
    const taught = await learnFrom(chat.secret, chat.chatId, 'Keep in mind: layoffs are planned in Berlin.', 'Layoffs are planned in Berlin');
    expect(await learnedAccess(taught.turnId)).toEqual([{ kind: 'members', ids: [chat.memberId] }]);
    // The member who taught it finds it; another member (with bots.write) neither finds, reads nor gets it in a Turn.
    const mine = await t.http().get(`/v1/bots/${chat.botId}/memories?q=layoffs%20berlin`).set('authorization', auth()).expect(200);
    const [item] = (mine.body as { data: Array<{ id: string }> }).data;
    expect(item).toBeDefined();
    const other = await addMember(t, chat.organizationId);
    const theirs = await t.http().get(`/v1/bots/${chat.botId}/memories?q=layoffs%20berlin`).set('authorization', bearer(other.secret)).expect(200);
    expect((theirs.body as { data: unknown[] }).data).toEqual([]);
    expectDeclared(await t.http().get(`/v1/bots/${chat.botId}/memories/${item!.id}`).set('authorization', bearer(other.secret)), 404, 'MemoryNotFound');
    await setMemory({ enabled: true, learn: false });
    const otherChat = await t.http().post('/v1/chats').set('authorization', bearer(other.secret)).send({ botId: chat.botId }).expect(201);
    fake.enqueue(textReply(['I know nothing of that.'], [10, 4]));
    const asked = await sendMessage(t, other.secret, (otherChat.body as { id: string }).id, 'Are layoffs planned in Berlin?');
    const events = (await eventsUntilEnd(t, other.secret, asked.executionId)) as ExecutionEvent[];
    expect(events.find((e) => e.type === 'memory.read')!.ids).toEqual([]);
    expect(systemText(fake.requests.length - 1)).not.toContain('Layoffs');
    // The member who taught it gets it in their Turns.
    fake.enqueue(textReply(['Yes.'], [10, 1]));
    const again = await sendMessage(t, chat.secret, chat.chatId, 'Are layoffs planned in Berlin?');
    const againEvents = (await eventsUntilEnd(t, chat.secret, again.executionId)) as ExecutionEvent[];
    expect(againEvents.find((e) => e.type === 'memory.read')!.ids).toEqual([item!.id]);
  });

  it('[MEM-01] memory.learnAccess bot: a Turn that read only bot items teaches every Turn; one that selected a narrower item still teaches only its member', async () => {
    const bad = await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', auth()).send({ memory: { enabled: true, learn: true, learnAccess: 'everyone' } });
    expectDeclared(bad, 400, 'InvalidInput');
    expect(issuePaths(bad)).toEqual(['memory.learnAccess']);
    await setMemory({ enabled: true, learn: true, learnAccess: 'bot' });
    const bot = await t.http().get(`/v1/bots/${chat.botId}`).set('authorization', auth()).expect(200);
    expect((bot.body as { memory: unknown }).memory).toEqual({ enabled: true, learn: true, learnAccess: 'bot' });
    const open = await learnFrom(chat.secret, chat.chatId, 'The cafeteria serves soup on Mondays.', 'The cafeteria serves soup on Mondays');
    expect(open.read).toEqual([]);
    expect(await learnedAccess(open.turnId)).toEqual([{ kind: 'bot' }]);
    // The Turn selects an item only its member may read: what it teaches must not reach everyone.
    const secret = await remember({ content: 'The Berlin office closes in March', tags: ['berlin'], access: { kind: 'members', ids: [chat.memberId] } });
    const narrow = await learnFrom(chat.secret, chat.chatId, 'What happens to the berlin office?', 'The Berlin office will close in March');
    expect(narrow.read).toEqual([secret]);
    expect(await learnedAccess(narrow.turnId)).toEqual([{ kind: 'members', ids: [chat.memberId] }]);
    const other = await addMember(t, chat.organizationId);
    const found = await t.http().get(`/v1/bots/${chat.botId}/memories?q=berlin`).set('authorization', bearer(other.secret)).expect(200);
    expect((found.body as { data: unknown[] }).data).toEqual([]);
  });

  it('[FW-03] a learned item equal to an active item with the same access rule is not stored again, and the learning execution says how many it skipped', async () => {
    await setMemory({ enabled: false, learn: true });
    const first = await learnFrom(chat.secret, chat.chatId, 'My badge number is 4471.', 'The user badge number is 4471.');
    expect(await learnedAccess(first.turnId)).toHaveLength(1);
    // The same fact again (other case, spaces and no full stop), twice in one answer, beside a new one.
    fake.enqueue(textReply(['Noted again.'], [10, 2]));
    fake.enqueue(
      textReply([JSON.stringify({ memories: [{ content: '  the USER badge   number is 4471 ' }, { content: 'The user badge number is 4471' }, { content: 'The user parks on level 2' }] })], [20, 8]),
    );
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Again: badge 4471, and I park on level 2.');
    const events = (await eventsUntilEnd(t, chat.secret, admitted.executionId)) as ExecutionEvent[];
    const learning = (await eventsUntilEnd(t, chat.secret, events.at(-2)!.executionId!)) as ExecutionEvent[];
    expect(learning.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed', learned: 1, duplicates: 2, unreadable: false, reason: null });
    const badge = await t.http().get(`/v1/bots/${chat.botId}/memories?q=badge%204471`).set('authorization', auth()).expect(200);
    expect((badge.body as { data: unknown[] }).data).toHaveLength(1);
    const parking = await t.http().get(`/v1/bots/${chat.botId}/memories?q=parks`).set('authorization', auth()).expect(200);
    expect((parking.body as { data: unknown[] }).data).toHaveLength(1);
    // Another access rule is another scope: the fact stored for a different member is not a duplicate of this one.
    const other = await addMember(t, chat.organizationId);
    const otherChat = (await t.http().post('/v1/chats').set('authorization', bearer(other.secret)).send({ botId: chat.botId }).expect(201)).body as { id: string };
    const theirs = await learnFrom(other.secret, otherChat.id, 'My badge number is 4471 too.', 'The user badge number is 4471');
    expect(await learnedAccess(theirs.turnId)).toEqual([{ kind: 'members', ids: [other.memberId] }]);
  });

  it('an unreadable learner answer ends completed but says so: execution.ended carries unreadable and the reason, and nothing is stored', async () => {
    await setMemory({ enabled: false, learn: true });
    fake.enqueue(textReply(['Sure.'], [10, 2]));
    fake.enqueue(textReply(['I would remember that the user likes green tea.'], [20, 8]));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'I like green tea.');
    const events = (await eventsUntilEnd(t, chat.secret, admitted.executionId)) as ExecutionEvent[];
    const learning = (await eventsUntilEnd(t, chat.secret, events.at(-2)!.executionId!)) as ExecutionEvent[];
    const ended = learning.at(-1)!;
    expect(ended).toMatchObject({ type: 'execution.ended', state: 'completed', learned: 0, duplicates: 0, unreadable: true, reason: 'the answer holds no JSON object' });
    // The reason is a fixed phrase: the model's text is not repeated in it.
    expect(JSON.stringify(ended)).not.toContain('green tea');
    const found = await t.http().get(`/v1/bots/${chat.botId}/memories?q=green%20tea`).set('authorization', auth()).expect(200);
    expect((found.body as { data: unknown[] }).data).toEqual([]);
    // An answer that is read but holds no facts is no unreadable answer.
    fake.enqueue(textReply(['Ok.'], [10, 2]));
    fake.enqueue(textReply(['{"memories":[]}'], [20, 2]));
    const quiet = await sendMessage(t, chat.secret, chat.chatId, 'Nothing to remember.');
    const quietEvents = (await eventsUntilEnd(t, chat.secret, quiet.executionId)) as ExecutionEvent[];
    const quietLearning = (await eventsUntilEnd(t, chat.secret, quietEvents.at(-2)!.executionId!)) as ExecutionEvent[];
    expect(quietLearning.at(-1)).toMatchObject({ state: 'completed', learned: 0, unreadable: false, reason: null });
  });

  it('[MEM-02] the learning model call runs with no memory lock held: changes go ahead while it is in flight', async () => {
    await setMemory({ enabled: false, learn: true });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    fake.enqueue(textReply(['Fine.'], [5, 1]));
    fake.enqueue(heldStreamReply([chunks.role(), chunks.text('{"memories":[{"content":"Held fact"}]}'), chunks.finish('stop')], { holdAfter: 1, release: released }));
    const before = fake.requests.length;
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Remember the held fact.');
    const events = (await eventsUntilEnd(t, chat.secret, admitted.executionId)) as ExecutionEvent[];
    const learningId = events.at(-2)!.executionId!;
    await fake.waitForRequests(before + 2);
    // The learner is mid-call: no backend holds or waits for a memory lock…
    const locks = await t.database.query(`SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::int4::oid`, [MEMORY_LOCK_NAMESPACE]);
    expect(locks).toEqual([]);
    // …so a change (exclusive lock) completes while the model call is still open.
    const added = await remember({ content: 'Added while the learner waits for its model' });
    expect(added).toEqual(expect.any(String));
    release();
    const learning = await eventsUntilEnd(t, chat.secret, learningId);
    expect(learning.at(-1)).toMatchObject({ state: 'completed' });
  });

  it('[LIM-01] a learner waits durably for a shared permit held elsewhere, and sends nothing until it has one', async () => {
    await setMemory({ enabled: false, learn: true });
    const cap = t.config.limits.memoryHelperPermits;
    // Other nodes' learners hold every permit.
    for (let slot = 1; slot <= cap; slot++) await t.database.query('INSERT INTO memory_permits (slot, execution_id) VALUES ($1, $2)', [slot, newId()]);
    fake.enqueue(textReply(['Sure.'], [5, 1]));
    fake.enqueue(textReply(['{"memories":[{"content":"Permit fact"}]}'], [5, 5]));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Remember the permit fact.');
    const events = (await eventsUntilEnd(t, chat.secret, admitted.executionId)) as ExecutionEvent[];
    const learningId = events.at(-2)!.executionId!;
    const requestsAfterTurn = fake.requests.length;
    await waitForExecutionState(t, chat.secret, learningId, 'waiting');
    expect(fake.requests.length).toBe(requestsAfterTurn);
    expect(await t.database.query('SELECT slot FROM memory_permits WHERE execution_id = $1', [learningId])).toEqual([]);
    // One permit frees: the learner takes it on its next wake, learns, and gives it back.
    await t.database.query('DELETE FROM memory_permits WHERE slot = 1');
    const learning = await eventsUntilEnd(t, chat.secret, learningId);
    expect(learning.at(-1)).toMatchObject({ state: 'completed' });
    expect(fake.requests.length).toBe(requestsAfterTurn + 1);
    const [held] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM memory_permits');
    expect(held!.n).toBe(cap - 1);
    await t.database.query('DELETE FROM memory_permits');
  });

  it('[LIM-01] a learner must still hold its permit right before each attempt sends: without it, that attempt is never sent', async () => {
    await setMemory({ enabled: false, learn: true });
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    fake.enqueue(textReply(['Okay.'], [5, 1]));
    // The learner's first attempt fails (a retryable 500) only after the test took its permit away.
    fake.enqueue(async (res) => {
      await answered;
      void statusReply(500, { error: { message: 'try again' } })(res);
    });
    fake.enqueue(textReply(['{"memories":[{"content":"Permit-checked fact"}]}'], [5, 5]));
    const before = fake.requests.length;
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Remember the permit-checked fact.');
    const events = (await eventsUntilEnd(t, chat.secret, admitted.executionId)) as ExecutionEvent[];
    const learningId = events.at(-2)!.executionId!;
    await fake.waitForRequests(before + 2);
    // Another node's recovery (or an operator) took the permit: the retry must not send under it.
    await t.database.query('DELETE FROM memory_permits WHERE execution_id = $1', [learningId]);
    answer();
    const learning = await eventsUntilEnd(t, chat.secret, learningId);
    expect(learning.at(-1)).toMatchObject({ state: 'completed' });
    // Attempt 2 of the first call was refused before sending; the learner took a permit again and
    // asked with a new call: two learning requests in all, with two different idempotency keys.
    const learningRequests = fake.requests.slice(before + 1);
    expect(learningRequests).toHaveLength(2);
    expect(learningRequests[0]!.headers['idempotency-key']).not.toBe(learningRequests[1]!.headers['idempotency-key']);
    const calls = await t.database.query<{ call_key: string; attempt: number; status: string }>(
      'SELECT call_key, attempt, status FROM execution_calls WHERE execution_id = $1 ORDER BY created_at, attempt',
      [learningId],
    );
    expect(new Set(calls.map((c) => c.call_key)).size).toBe(2);
    expect(calls.at(-1)).toMatchObject({ status: 'succeeded' });
  });
});

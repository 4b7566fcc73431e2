import { SealedRecords } from '@openbot/platform';
import type { SealedRecordId } from '@openbot/domain';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { addMember, bearer, createChatFixture, eventsUntilEnd, sendMessage, waitForEvent, type EventBody } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitForExecutionState } from '../support/tool-probes';

/**
 * A Turn runs with the identity that started it (IDN-01) and stops once that identity is no
 * longer valid (IDN-06): the real app, a fake model and a fake tool endpoint. The check runs when
 * the Turn wakes and before every outside send, against the database as it is then.
 */

const PARAMS = { type: 'object', properties: {} };

describe('identity revocation mid-Turn', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;
  const servers: Array<{ close(): Promise<void> }> = [];

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await t?.close();
  });
  beforeEach(async () => {
    model = await FakeOpenAiServer.start();
    tools = await FakeToolServer.start();
    servers.push(model, tools);
  });

  /** The private reason of a failed execution, from its sealed error record. */
  async function sealedReason(errorId: string): Promise<string> {
    const [record] = await t.database.query<{ category: string; cause_id: string }>('SELECT category, cause_id FROM error_records WHERE id = $1', [errorId]);
    expect(record?.category).toBe('forbidden');
    const opened = await t.app.get(SealedRecords).get(record!.cause_id as SealedRecordId);
    return (opened?.value as { message: string }).message;
  }

  function ending(events: readonly EventBody[]): EventBody {
    const end = events.at(-1)!;
    expect(end).toMatchObject({ type: 'execution.ended', state: 'failed', category: 'forbidden', errorId: expect.any(String) });
    // Only the category and the error ID leave the server (ERR-01): no reason in the event.
    expect(JSON.stringify(end)).not.toMatch(/revoked|removed|API key|member|identity/i);
    return end;
  }

  it('[IDN-06] revoking the API key that started a Turn stops the Turn at its next outside send', async () => {
    const chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [{ name: 'confirm', description: 'Asks the user', parameters: PARAMS }] });
    const keyA = chat.secret;
    model.enqueue(toolCallReply('call_r1', 'confirm', ['{}']), textReply(['The next Turn answers.']));

    // Key A starts the Turn; its first model step asks for a client tool, so the Turn waits.
    const admitted = await sendMessage(t, keyA, chat.chatId, 'Please confirm');
    const before = await waitForEvent(t, keyA, admitted.executionId, 'tool.called');
    const callId = before.find((e) => e.type === 'tool.called')!.callId as string;
    await waitForExecutionState(t, keyA, admitted.executionId, 'waiting');
    expect(model.requests).toHaveLength(1);

    // Key B of the same member revokes key A.
    const listed = await t.http().get('/v1/api-keys').set('authorization', bearer(keyA)).expect(200);
    const keyAId = (listed.body as { data: Array<{ id: string }> }).data[0]!.id;
    const created = await t.http().post('/v1/api-keys').set('authorization', bearer(keyA)).send({ name: 'second' }).expect(201);
    const keyB = (created.body as { secret: string }).secret;
    await t.http().delete(`/v1/api-keys/${keyAId}`).set('authorization', bearer(keyB)).expect(200);
    expect((await t.http().get(`/v1/executions/${admitted.executionId}`).set('authorization', bearer(keyA))).status).toBe(401);

    // Key B answers the client tool: the Turn wakes, and the check of its identity (key A) before it
    // goes on to its next model send finds the key revoked; the send never happens.
    await t.http().post(`/v1/chats/${chat.chatId}/tool-outputs`).set('authorization', bearer(keyB)).send({ callId, output: 'yes' }).expect(202);
    const events = await eventsUntilEnd(t, keyB, admitted.executionId);
    const end = ending(events);
    expect(model.requests).toHaveLength(1);
    expect(events.filter((e) => e.type === 'model.started')).toHaveLength(1);
    const view = await t.http().get(`/v1/executions/${admitted.executionId}`).set('authorization', bearer(keyB)).expect(200);
    expect(view.body).toMatchObject({ state: 'failed', category: 'forbidden', errorId: end.errorId });
    expect(await sealedReason(end.errorId as string)).toMatch(/API key was revoked/);

    // The stopped Turn ended and freed the Chat: key B's own Turn runs with key B's identity.
    const next = await sendMessage(t, keyB, chat.chatId, 'Hello again');
    expect(next.admission).toBe('started');
    const nextEvents = await eventsUntilEnd(t, keyB, next.executionId);
    expect(nextEvents.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(model.requests).toHaveLength(2);
  });

  /**
   * A second member's Turn whose model asked for an http tool, held at the tool endpoint until
   * `release()`: the member is valid when the tool is called and changes while it runs.
   */
  async function memberTurnAtTool(callId: string) {
    const chat = await createChatFixture(t, {
      baseUrl: model.baseUrl,
      tools: [{ name: 'lookup', description: 'Looks something up', parameters: PARAMS, kind: 'http', url: tools.url('/lookup') }],
    });
    const member = await addMember(t, chat.organizationId);
    let received!: () => void;
    const toolReached = new Promise<void>((resolve) => (received = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    tools.enqueue(async (res) => {
      received();
      await released;
      await jsonReply(200, { modelOutput: 'found it' })(res);
    });
    model.enqueue(toolCallReply(callId, 'lookup', ['{}']), textReply(['never sent']));
    const admitted = await sendMessage(t, member.secret, chat.chatId, 'Look it up');
    await toolReached;
    return { chat, member, admitted, release };
  }

  it('[IDN-06] removing the member mid-Turn stops its Turn', async () => {
    // The member's Turn is out at the tool endpoint when an owner removes the member.
    const { chat, member, admitted, release } = await memberTurnAtTool('call_m1');
    await t.http().delete(`/v1/members/${member.memberId}`).set('authorization', bearer(chat.secret)).expect(200);
    release();

    // The tool's answer is kept (it was sent while the member was valid); the next model send is refused.
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
    const end = ending(events);
    expect(events.filter((e) => e.type === 'tool.result')).toEqual([expect.objectContaining({ callId: 'call_m1', isError: false })]);
    expect(model.requests).toHaveLength(1);
    expect(tools.requests).toHaveLength(1);
    expect(await sealedReason(end.errorId as string)).toMatch(/member was removed/);
    const calls = await t.database.query<{ call_key: string; status: string }>('SELECT call_key, status FROM execution_calls WHERE execution_id = $1 ORDER BY created_at', [
      admitted.executionId,
    ]);
    expect(calls).toEqual([
      { call_key: '1:model', status: 'succeeded' },
      { call_key: '2:tool:call_m1', status: 'succeeded' },
      { call_key: '3:model', status: 'failed' },
    ]);
    // The Turn is over: the Chat takes the next input at once.
    const next = await sendMessage(t, chat.secret, chat.chatId, 'Anyone?');
    expect(next.admission).toBe('started');
  });

  it('[IDN-06] demoting the member to viewer mid-Turn stops its Turn: the work needs chats.write for as long as it runs', async () => {
    const { chat, member, admitted, release } = await memberTurnAtTool('call_d1');
    await t.http().patch(`/v1/members/${member.memberId}`).set('authorization', bearer(chat.secret)).send({ role: 'viewer' }).expect(200);
    release();
    const end = ending(await eventsUntilEnd(t, chat.secret, admitted.executionId));
    expect(end).toMatchObject({ state: 'failed', category: 'forbidden' });
    expect(await sealedReason(end.errorId as string)).toMatch(/may no longer use chats.write/);
    expect(model.requests).toHaveLength(1);
  });
});

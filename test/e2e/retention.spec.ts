import { randomUUID } from 'node:crypto';
import { Engine, ManualClock } from '@openbot/engine';
import { RETENTION_SCHEDULE } from '@openbot/features';
import type { AddressInfo } from 'node:net';
import { FakeOpenAiServer, textReply } from '../fakes/fake-openai-server';
import { addMember, bearer, createChatFixture, eventsUntilEnd, listMessages, replyText, sendMessage, type ChatFixture, type EventBody } from '../support/chat-fixture';
import { openSse } from '../support/sse-client';
import { expectDeclared } from '../support/api-assertions';
import { startTestApp, type TestApp } from '../support/test-app';

const clock = new ManualClock();
const DAY = 24 * 3600 * 1000;
/** Every node of the platform has the same retention configuration (the schedule is the platform's). */
const ENV = { OPENBOT_RETENTION_TEXT_DELTA_DAYS: '30', OPENBOT_RETENTION_CALL_PAYLOAD_DAYS: '30', OPENBOT_RETENTION_SCHEDULE: '* * * * *' };

/**
 * Retention (docs/decisions/041-retention.md) against real PostgreSQL, driven by the engine's
 * injectable clock: moving it past an organization's retention and running the durable schedule
 * prunes exactly what the settings say, and keeps the final state, the reply, usage and the audit.
 */
describe('retention', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let short: ChatFixture;
  let standard: ChatFixture;
  let shortTurn: string;
  let standardTurn: string;

  const count = async (sql: string, params: unknown[]): Promise<number> => Number((await t.database.query<{ n: number }>(sql, params))[0]!.n);
  const deltas = (executionId: string) => count(`SELECT count(*)::int AS n FROM execution_events WHERE execution_id = $1 AND type = 'text.delta'`, [executionId]);
  const callResults = (executionId: string) => count(`SELECT count(*)::int AS n FROM execution_calls WHERE execution_id = $1 AND result IS NOT NULL`, [executionId]);

  /**
   * Moves the engine's clock on, runs the retention schedule's due fire (this tick or the node's
   * own poll: one fire either way, STC-01) and waits for that run's end; its result.
   */
  async function runRetention(advanceMs: number): Promise<{ batches: number; deltasPruned: number; payloadsCleared: number }> {
    const engine = t.app.get(Engine);
    const before = (await engine.schedules.fires(RETENTION_SCHEDULE)).length;
    clock.advance(advanceMs);
    await engine.schedules.tick();
    const fires = await engine.schedules.fires(RETENTION_SCHEDULE);
    expect(fires.length).toBe(before + 1);
    const id = fires.at(-1)!.executionId;
    expect(await engine.waitForEnd(id, AbortSignal.timeout(20_000))).toBe('completed');
    return (await engine.result(id)) as { batches: number; deltasPruned: number; payloadsCleared: number };
  }

  const storedDeltas = new Map<string, number>();
  async function turn(chat: ChatFixture): Promise<string> {
    fake.enqueue(textReply(['Hel', 'lo', ' there'], [7, 3]));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Hi');
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
    expect(replyText(events)).toBe('Hello there');
    // Tokens that arrive together join one event: how many a Turn stored is read back, not assumed.
    storedDeltas.set(admitted.executionId, events.filter((e) => e.type === 'text.delta').length);
    return admitted.executionId;
  }

  beforeAll(async () => {
    t = await startTestApp({ clock, env: ENV });
    fake = await FakeOpenAiServer.start();
    short = await createChatFixture(t, { baseUrl: fake.baseUrl });
    standard = await createChatFixture(t, { baseUrl: fake.baseUrl });
    // The schedule is upserted at boot, once the schema is there (the template database is migrated: at once).
    expect(await t.app.get(Engine).schedules.get(RETENTION_SCHEDULE)).toMatchObject({ workflow: 'platform.retention', cron: '* * * * *' });
    shortTurn = await turn(short);
    standardTurn = await turn(standard);
  });
  afterAll(async () => {
    await fake?.close();
    await t?.close();
  });

  it('settings: owners and admins read and set them (audited); null is the platform default; members get 403; bad days are 400 with the field', async () => {
    const auth = bearer(short.secret);
    expect((await t.http().get('/v1/retention').set('authorization', auth).expect(200)).body).toEqual({
      textDeltaDays: null,
      callPayloadDays: null,
      effective: { textDeltaDays: 30, callPayloadDays: 30 },
    });
    const set = await t.http().put('/v1/retention').set('authorization', auth).send({ textDeltaDays: 1, callPayloadDays: 2 }).expect(200);
    expect(set.body).toEqual({ textDeltaDays: 1, callPayloadDays: 2, effective: { textDeltaDays: 1, callPayloadDays: 2 } });
    const audit = await t.database.query<{ action: string; details: unknown }>(`SELECT action, details FROM audit_events WHERE organization_id = $1 AND action = 'retention.updated'`, [short.organizationId]);
    expect(audit).toEqual([{ action: 'retention.updated', details: { textDeltaDays: 1, callPayloadDays: 2 } }]);

    const member = await addMember(t, short.organizationId, 'member');
    await t.http().get('/v1/retention').set('authorization', bearer(member.secret)).expect(403);
    await t.http().put('/v1/retention').set('authorization', bearer(member.secret)).send({ textDeltaDays: 5 }).expect(403);
    const bad = await t.http().put('/v1/retention').set('authorization', auth).send({ textDeltaDays: 0, callPayloadDays: 'x' }).expect(400);
    expect(JSON.stringify(bad.body)).toContain('textDeltaDays');
    expect(JSON.stringify(bad.body)).toContain('callPayloadDays');
    // The other organization still has the defaults.
    expect((await t.http().get('/v1/retention').set('authorization', bearer(standard.secret)).expect(200)).body).toMatchObject({ effective: { textDeltaDays: 30, callPayloadDays: 30 } });
  });

  it('PUT replaces both settings: a field left out is 400 naming it and changes nothing; an explicit null is the platform default', async () => {
    const org = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const auth = bearer(org.secret);
    await t.http().put('/v1/retention').set('authorization', auth).send({ textDeltaDays: 4, callPayloadDays: 5 }).expect(200);
    const partial = await t.http().put('/v1/retention').set('authorization', auth).send({ textDeltaDays: 6 });
    expectDeclared(partial, 400, 'InvalidInput');
    const partialIssues = (partial.body as { issues: Array<{ path: string; message: string }> }).issues;
    expect([...new Set(partialIssues.map((i) => i.path))]).toEqual(['callPayloadDays']);
    expect(partialIssues.map((i) => i.message)).toContain('callPayloadDays is required: send a number of days, or null for the platform default');
    const empty = await t.http().put('/v1/retention').set('authorization', auth).send({});
    expectDeclared(empty, 400, 'InvalidInput');
    expect([...new Set((empty.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path))].sort()).toEqual(['callPayloadDays', 'textDeltaDays']);
    expect((await t.http().get('/v1/retention').set('authorization', auth).expect(200)).body).toMatchObject({ textDeltaDays: 4, callPayloadDays: 5 });
    const reset = await t.http().put('/v1/retention').set('authorization', auth).send({ textDeltaDays: 6, callPayloadDays: null }).expect(200);
    expect(reset.body).toEqual({ textDeltaDays: 6, callPayloadDays: null, effective: { textDeltaDays: 6, callPayloadDays: 30 } });
  });

  it('before its retention nothing is pruned', async () => {
    await runRetention(DAY - 60_000);
    expect(await deltas(shortTurn)).toBe(storedDeltas.get(shortTurn));
    expect(await callResults(shortTurn)).toBeGreaterThan(0);
  });

  it('past the organization\'s 1 day the deltas go, call results (2 days) and the other organization (30 days) stay; the final state, reply, usage and audit are kept', async () => {
    const usageBefore = await count('SELECT count(*)::int AS n FROM usage_records WHERE execution_id = $1', [shortTurn]);
    const otherEvents = await count(`SELECT count(*)::int AS n FROM execution_events WHERE execution_id = $1 AND type <> 'text.delta'`, [shortTurn]);
    const run = await runRetention(2 * 60_000);
    expect(run.deltasPruned).toBeGreaterThanOrEqual(storedDeltas.get(shortTurn)!);
    expect(await deltas(shortTurn)).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM execution_events WHERE execution_id = $1`, [shortTurn])).toBe(otherEvents);
    expect(await callResults(shortTurn)).toBeGreaterThan(0);
    expect(await deltas(standardTurn)).toBe(storedDeltas.get(standardTurn));
    expect(await callResults(standardTurn)).toBeGreaterThan(0);
    // Kept: the final state, the reply (the Chat's message), usage and the audit record.
    expect((await t.http().get(`/v1/executions/${shortTurn}`).set('authorization', bearer(short.secret)).expect(200)).body).toMatchObject({ state: 'completed' });
    expect((await listMessages(t, short.secret, short.chatId)).filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual(['Hello there']);
    expect(await count('SELECT count(*)::int AS n FROM usage_records WHERE execution_id = $1', [shortTurn])).toBe(usageBefore);
    expect(usageBefore).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM audit_events WHERE organization_id = $1 AND action = 'retention.updated'`, [short.organizationId])).toBe(1);
  });

  it('a reader of the pruned execution gets the final event with the pruned marker, by long poll and by SSE replay', async () => {
    // Read on another node, as a reader days later would (on the same clock): no events of the Turn in its memory.
    const reader = await startTestApp({ clock, database: t.database, masterKey: t.config.masterKey, env: ENV });
    try {
      const events: EventBody[] = await eventsUntilEnd(reader, short.secret, shortTurn);
      expect(events.some((e) => e.type === 'text.delta')).toBe(false);
      expect(events.map((e) => e.type)).toContain('model.completed');
      const ended = events.at(-1)!;
      expect(ended).toMatchObject({ type: 'execution.ended', state: 'completed', pruned: { types: ['text.delta'], at: expect.any(String) } });
      expect(new Date((ended.pruned as { at: string }).at).getTime()).toBe(clock.now());

      await reader.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (reader.app.getHttpServer().address() as AddressInfo).port;
      const stream = await openSse(port, `/v1/executions/${shortTurn}/events`, { authorization: bearer(short.secret) });
      await stream.waitFor('execution.ended');
      await stream.ended;
      expect(stream.text()).toContain('"pruned":{"types":["text.delta"]');
      expect(stream.text()).not.toContain('event: text.delta');

      // An execution not pruned has no marker.
      const other = await eventsUntilEnd(reader, standard.secret, standardTurn);
      expect(replyText(other)).toBe('Hello there');
      expect(other.at(-1)).not.toHaveProperty('pruned');
    } finally {
      await reader.close();
    }
  });

  it('[RES-06] past 2 days the call results go too; after 30 days the other organization is pruned by the platform defaults; a physical scope’s close result is kept', async () => {
    // An App session the Turn opened and closed: its stored close result outlives every pruning.
    const appId = randomUUID();
    const connectionId = randomUUID();
    const scopeId = randomUUID();
    await t.database.query(`INSERT INTO apps (id, organization_id, url, name, card, remotes) VALUES ($1, $2, 'http://mcp.example/mcp', 'kept', false, '[]')`, [appId, short.organizationId]);
    await t.database.query(
      `INSERT INTO app_connections (id, organization_id, app_id, owner, remote, prepared_remote, variables, headers, state) VALUES ($1, $2, $3, 'organization', 'r', '{}', '{}', '{}', 'ready')`,
      [connectionId, short.organizationId, appId],
    );
    await t.database.query(
      `INSERT INTO app_connection_scopes (id, connection_id, node_id, execution_id, url, era, session_id, lease_until, closed_at, close_result)
       VALUES ($1, $2, 'node-x', $3, 'http://mcp.example/mcp', 'legacy', 's1', now(), now(), '{"kind":"deleted"}')`,
      [scopeId, connectionId, shortTurn],
    );
    const run = await runRetention(DAY);
    expect(run.payloadsCleared).toBeGreaterThan(0);
    expect(await callResults(shortTurn)).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM executions WHERE id = $1 AND payloads_pruned_at IS NOT NULL', [shortTurn])).toBe(1);
    expect(await deltas(standardTurn)).toBe(storedDeltas.get(standardTurn));

    await runRetention(28 * DAY);
    expect(await deltas(standardTurn)).toBe(0);
    expect(await callResults(standardTurn)).toBe(0);
    // The run itself reports what it pruned and ran in batches (one statement per kind and batch).
    expect(await runRetention(60_000)).toEqual({ batches: 1, deltasPruned: 0, payloadsCleared: 0 });
    expect(await t.database.query(`SELECT close_result FROM app_connection_scopes WHERE id = $1`, [scopeId])).toEqual([{ close_result: { kind: 'deleted' } }]);
  });
});

const ceilingClock = new ManualClock();

/** The operator's ceiling on every organization's retention (OPENBOT_RETENTION_MAX_DAYS, decision 074). */
describe('retention ceiling', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let chat: ChatFixture;

  beforeAll(async () => {
    t = await startTestApp({
      clock: ceilingClock,
      env: { OPENBOT_RETENTION_TEXT_DELTA_DAYS: '2', OPENBOT_RETENTION_CALL_PAYLOAD_DAYS: '2', OPENBOT_RETENTION_MAX_DAYS: '3', OPENBOT_RETENTION_SCHEDULE: '* * * * *' },
    });
    fake = await FakeOpenAiServer.start();
    chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
  });
  afterAll(async () => {
    await fake?.close();
    await t?.close();
  });

  it('a setting above the ceiling is 400 naming the field, and nothing is saved', async () => {
    const auth = bearer(chat.secret);
    const over = await t.http().put('/v1/retention').set('authorization', auth).send({ textDeltaDays: 3, callPayloadDays: 3650 });
    expect(over.status).toBe(400);
    expect((over.body as { type: string; issues: Array<{ path: string; message: string }> })).toMatchObject({
      type: 'InvalidInput',
      issues: [{ path: 'callPayloadDays', message: expect.stringContaining('3 days') }],
    });
    expect((await t.http().get('/v1/retention').set('authorization', auth).expect(200)).body).toEqual({ textDeltaDays: null, callPayloadDays: null, effective: { textDeltaDays: 2, callPayloadDays: 2 } });
    await t.http().put('/v1/retention').set('authorization', auth).send({ textDeltaDays: 3, callPayloadDays: 3 }).expect(200);
  });

  it('a setting saved under a higher ceiling applies as the ceiling: shown so, and pruned so', async () => {
    const auth = bearer(chat.secret);
    // Saved while the operator allowed a year; the ceiling is now 3 days.
    await t.database.query(`UPDATE organization_retention SET text_delta_days = 365, call_payload_days = 365 WHERE organization_id = $1`, [chat.organizationId]);
    expect((await t.http().get('/v1/retention').set('authorization', auth).expect(200)).body).toEqual({ textDeltaDays: 365, callPayloadDays: 365, effective: { textDeltaDays: 3, callPayloadDays: 3 } });

    fake.enqueue(textReply(['Hel', 'lo'], [5, 2]));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Hi');
    expect((await eventsUntilEnd(t, chat.secret, admitted.executionId)).at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    const engine = t.app.get(Engine);
    const before = (await engine.schedules.fires(RETENTION_SCHEDULE)).length;
    ceilingClock.advance(3 * DAY + 2 * 60_000);
    await engine.schedules.tick();
    const fires = await engine.schedules.fires(RETENTION_SCHEDULE);
    expect(fires.length).toBe(before + 1);
    expect(await engine.waitForEnd(fires.at(-1)!.executionId, AbortSignal.timeout(20_000))).toBe('completed');
    const left = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM execution_events WHERE execution_id = $1 AND type = 'text.delta'`, [admitted.executionId]);
    expect(left).toEqual([{ n: 0 }]);
    const results = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM execution_calls WHERE execution_id = $1 AND result IS NOT NULL`, [admitted.executionId]);
    expect(results).toEqual([{ n: 0 }]);
  });
});

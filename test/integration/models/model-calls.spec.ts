import { userMessage } from '@openbot/core';
import { identityForService, newId, parseExecutionIdentity, type ExecutionIdentity } from '@openbot/domain';
import { codec, defineWorkflow, type Codec, type Engine, type ExecutionEvent, type IdentityCheck, type IdentityVerdict, type Json } from '@openbot/engine';
import { EgressClient } from '../../../libs/platform/src/egress/egress-client';
import { EgressPolicy } from '../../../libs/platform/src/egress/egress-policy';
import { MODEL_PROVIDER_API_KEY_PURPOSE } from '../../../libs/platform/src/model-providers/model-provider-view';
import { ModelCalls } from '../../../libs/platform/src/models/model-calls';
import { modelStepResultCodec } from '../../../libs/platform/src/models/model-step-codec';
import { ModelRegistry } from '../../../libs/platform/src/models/model-registry';
import { SealedRecords } from '../../../libs/platform/src/sealing/sealed-records';
import { chunks, FakeOpenAiServer, heldStreamReply, streamReply, textReply } from '../../fakes/fake-openai-server';
import { startWorkflowKit, type WorkflowKit } from '../../support/workflow-kit';
import { eventually, forceTakeover, localRuns } from '../engine/helpers';

const API_KEY = 'sk-model-calls-sealed';
const ESTIMATE = 25;

interface SummaryState {
  readonly organizationId: string;
  readonly scopeId: string;
  readonly prompt: string;
  readonly summary: string | null;
}

const summaryStateCodec: Codec<SummaryState> = codec.object({
  organizationId: codec.string,
  scopeId: codec.string,
  prompt: codec.string,
  summary: codec.nullable(codec.string),
});

/** A workflow that is not a Turn: its `model` call is declared with the model step's codec. */
const SUMMARY = defineWorkflow({
  name: 'test.summary',
  input: summaryStateCodec,
  state: summaryStateCodec,
  result: codec.string,
  calls: { model: modelStepResultCodec },
});

/**
 * A workflow that is not a Turn (a summary, as Bot memory or scheduled work would make one): one
 * phase, one model call through ModelCalls, and nothing of the Turn's own code. Everything the
 * call is billed and logged with comes from ModelCalls.
 */
function summaryWorkflow(models: ModelCalls) {
  return SUMMARY.implement({
    initial: (input) => input,
    next: (s) => (s.summary === null ? { phase: 'summarize' } : { end: 'completed', result: s.summary }),
    phases: {
      summarize: {
        async run(context) {
          const { state } = context;
          const result = await models.call(context, {
            organizationId: state.organizationId,
            model: 'fake/gpt-test',
            messages: [userMessage(state.prompt)],
            tools: [],
            estimatedInputTokens: ESTIMATE,
            billing: { scopeKind: 'service', scopeId: state.scopeId },
            eventStep: 1,
          });
          return { state: { ...state, summary: result.text } };
        },
      },
    },
  });
}

/** The product's identity check stands in for revocation: an actor in `revoked` is invalid from then on. */
class RevocableCheck implements IdentityCheck {
  readonly revoked = new Set<string>();
  async check(identity: Json): Promise<IdentityVerdict> {
    const actor = parseExecutionIdentity(identity).actor.id;
    return this.revoked.has(actor) ? { invalid: `test revoked ${actor}` } : 'valid';
  }
  derive(parent: Json): Json {
    return parent;
  }
}

async function collect(engine: Engine, executionId: string): Promise<ExecutionEvent[]> {
  const events: ExecutionEvent[] = [];
  for await (const event of engine.observe(executionId, 0, undefined, false)) events.push(event);
  return events;
}

/** The `model.*` events, with the fields a reader branches on. */
const modelEvents = (events: readonly ExecutionEvent[]) =>
  events
    .filter((e) => e.type.startsWith('model.'))
    .map(({ type, step, attempt, category, retrying, usage }) => ({ type, step, attempt, ...(category === undefined ? {} : { category, retrying }), ...(usage === undefined ? {} : { usage }) }));

describe('ModelCalls: the one model-call path, used by a workflow that is not a Turn', () => {
  let t: WorkflowKit;
  let fake: FakeOpenAiServer;
  let models: ModelCalls;
  const check = new RevocableCheck();
  const organizationId = newId();
  const providerId = newId();

  beforeAll(async () => {
    t = await startWorkflowKit({ identityCheck: check });
    fake = await FakeOpenAiServer.start();
    const sealedRecords = new SealedRecords(t.sealer, t.db);
    const egress = new EgressClient(new EgressPolicy(['127.0.0.1']), { toolAnswerBytes: 1024 * 1024, documentBytes: 64 * 1024 });
    models = new ModelCalls(t.db, new ModelRegistry(t.db, sealedRecords, egress));

    await t.database.query(`INSERT INTO organizations (id, name) VALUES ($1, 'model-calls')`, [organizationId]);
    const keyId = await sealedRecords.put(MODEL_PROVIDER_API_KEY_PURPOSE, API_KEY);
    await t.database.query(
      `INSERT INTO model_providers (id, organization_id, name, kind, base_url, api_key_record_id) VALUES ($1, $2, 'fake', 'openai-compatible', $3, $4)`,
      [providerId, organizationId, fake.baseUrl, keyId],
    );
    t.engine.register(summaryWorkflow(models));
    await t.engine.start();
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
  });

  /** A fresh service identity per test: revoking it touches no other test. */
  const submit = async (engine: Engine, prompt: string) => {
    const identity: ExecutionIdentity = identityForService({ id: newId(), organizationId });
    const input: SummaryState = { organizationId, scopeId: identity.actor.id, prompt, summary: null };
    const { executionId } = await engine.submit({
      ...SUMMARY.command(input),
      scope: { kind: 'service', id: identity.actor.id, organizationId },
      identity: identity as unknown as Json,
    });
    return { executionId, identity };
  };
  const callRows = (executionId: string) =>
    t.database.query<{ id: string; call_key: string; attempt: number; status: string; idempotency_key: string }>(
      'SELECT id, call_key, attempt, status, idempotency_key FROM execution_calls WHERE execution_id = $1 ORDER BY attempt',
      [executionId],
    );
  const holds = (executionId: string) =>
    t.database.query<{ call_key: string; attempt: number; estimated_input_tokens: number; released: boolean }>(
      'SELECT call_key, attempt, estimated_input_tokens, released_at IS NOT NULL AS released FROM usage_holds WHERE execution_id = $1 ORDER BY attempt',
      [executionId],
    );
  const usage = (executionId: string) =>
    t.database.query<Record<string, unknown>>(
      `SELECT u.call_id, u.organization_id, u.scope_kind, u.scope_id, u.bot_id, u.chat_id, u.turn_id, u.model, u.status,
              u.input_tokens, u.output_tokens, u.estimated_input_tokens, u.settled_at IS NOT NULL AS settled
         FROM usage_records u JOIN execution_calls c ON c.id = u.call_id WHERE u.execution_id = $1 ORDER BY c.attempt`,
      [executionId],
    );

  it('[PLAT-06] [USE-01] [USE-03] [CALL-04] a broken stream is retried as a new attempt with the same provider idempotency key; the call gets one confirmed usage record, released holds, its call-log attempts and model.* events', async () => {
    fake.enqueue(
      streamReply([chunks.role(), chunks.text('Partial'), chunks.finish('stop')], { dropAfter: 2 }),
      textReply(['A short ', 'summary'], [21, 4]),
    );
    const { executionId, identity } = await submit(t.engine, 'Summarize this');
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    expect(await t.engine.result(executionId)).toBe('A short summary');

    // The provider was asked twice with one idempotency key (CALL-02), with the sealed key opened for the call.
    expect(fake.requests).toHaveLength(2);
    const [key] = fake.keys();
    expect(fake.keys()).toHaveLength(1);
    expect(fake.countByKey(key!)).toBe(2);
    expect(fake.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${API_KEY}`, `Bearer ${API_KEY}`]);
    expect(fake.requests[1]!.body).toMatchObject({ model: 'gpt-test', messages: [{ role: 'user', content: 'Summarize this' }] });

    // Each attempt is its own row of the call log, under the phase's call key, with that key (CALL-04).
    const calls = await callRows(executionId);
    expect(calls.map(({ call_key, attempt, status, idempotency_key }) => ({ call_key, attempt, status, idempotency_key }))).toEqual([
      { call_key: '1:model', attempt: 1, status: 'failed', idempotency_key: key },
      { call_key: '1:model', attempt: 2, status: 'succeeded', idempotency_key: key },
    ]);

    // One record for the call, on the succeeded attempt's call ID, billed to the workflow's identity (USE-01).
    expect(await usage(executionId)).toEqual([
      {
        call_id: calls[1]!.id,
        organization_id: organizationId,
        scope_kind: 'service',
        scope_id: identity.actor.id,
        bot_id: null,
        chat_id: null,
        turn_id: null,
        model: 'fake/gpt-test',
        status: 'confirmed',
        input_tokens: 21,
        output_tokens: 4,
        estimated_input_tokens: ESTIMATE,
        settled: true,
      },
    ]);

    // Each attempt held the estimate; the failure and the result released them (USE-03).
    expect(await holds(executionId)).toEqual([
      { call_key: '1:model', attempt: 1, estimated_input_tokens: ESTIMATE, released: true },
      { call_key: '1:model', attempt: 2, estimated_input_tokens: ESTIMATE, released: true },
    ]);

    // A new start event per attempt; the failure says it is retried; the result carries its usage.
    expect(modelEvents(await collect(t.engine, executionId))).toEqual([
      { type: 'model.started', step: 1, attempt: 1 },
      { type: 'model.failed', step: 1, attempt: 1, category: 'unavailable', retrying: true },
      { type: 'model.started', step: 1, attempt: 2 },
      { type: 'model.completed', step: 1, attempt: 2, usage: { inputTokens: 21, outputTokens: 4 } },
    ]);
  });

  it('[IDN-06] a revoked identity stops the model call before it is sent: no request, no hold, no usage, and the workflow fails forbidden', async () => {
    const identity: ExecutionIdentity = identityForService({ id: newId(), organizationId });
    check.revoked.add(identity.actor.id);
    const input: SummaryState = { organizationId, scopeId: identity.actor.id, prompt: 'Never sent', summary: null };
    const { executionId } = await t.engine.submit({
      ...SUMMARY.command(input),
      scope: { kind: 'service', id: identity.actor.id, organizationId },
      identity: identity as unknown as Json,
    });
    expect(await t.engine.waitForEnd(executionId)).toBe('failed');
    expect(await t.engine.get(executionId)).toMatchObject({ state: 'failed', category: 'forbidden' });
    expect(fake.requests).toHaveLength(0);
    expect((await callRows(executionId)).map((c) => c.status)).toEqual(['failed']);
    expect(await holds(executionId)).toEqual([]);
    expect(await usage(executionId)).toEqual([]);
    expect(modelEvents(await collect(t.engine, executionId))).toEqual([]);
  });

  it('[USE-04] [USE-03] after a takeover the attempt the new owner closes is billed unknown with its estimate, never zero, and the new attempt is billed confirmed on its own; both holds are released', async () => {
    const b = await t.node('node-b');
    b.engine.register(summaryWorkflow(models));
    await b.engine.start();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // Node A's attempt streams, then hangs until the test lets it finish; node B's answers at once.
    fake.enqueue(
      heldStreamReply([chunks.role(), chunks.text('late'), chunks.finish('stop'), chunks.usage(30, 7)], { holdAfter: 2, release: held }),
      textReply(['fresh'], [20, 3]),
    );
    const { executionId } = await submit(t.engine, 'Summarize again');
    await fake.waitForRequests(1);
    // A's `model.started` is stored before the takeover: written after it, the write would meet the
    // new generation and close A's gate at once (A would close its own attempt before B finds it).
    await eventually(async () => (await collect(t.engine, executionId)).some((e) => e.type === 'model.started'), "node A's model.started to be stored");
    await forceTakeover(t.database, b.engine, executionId, 1);
    expect(await b.engine.waitForEnd(executionId)).toBe('completed');
    expect(await b.engine.result(executionId)).toBe('fresh');
    const calls = await callRows(executionId);
    expect(calls.map((c) => [c.attempt, c.status])).toEqual([
      [1, 'failed'],
      [2, 'succeeded'],
    ]);
    expect(calls[1]!.idempotency_key).toBe(calls[0]!.idempotency_key);
    expect((await usage(executionId)).map((u) => [u.call_id, u.status, u.input_tokens, u.estimated_input_tokens])).toEqual([
      [calls[0]!.id, 'unknown', null, ESTIMATE],
      [calls[1]!.id, 'confirmed', 20, ESTIMATE],
    ]);
    // B's attempt released A's hold when it opened its own (USE-03).
    expect((await holds(executionId)).map((h) => [h.attempt, h.released])).toEqual([
      [1, true],
      [2, true],
    ]);

    // Node A's answer may still arrive late (CALL-05), unless A saw its lease lost first and
    // aborted the stream: either way the call stays two records, the first unknown with its
    // estimate or settled once with A's own usage, the second unchanged.
    const [, confirmed] = await usage(executionId);
    release();
    await eventually(() => localRuns(t.engine) === 0, 'node A to drop its lost run');
    const rows = await usage(executionId);
    expect(rows).toHaveLength(2);
    const [first, second] = rows;
    expect(second).toEqual(confirmed);
    expect([
      { status: 'unknown', input_tokens: null, output_tokens: null, settled: false },
      { status: 'confirmed', input_tokens: 30, output_tokens: 7, settled: true },
    ]).toContainEqual({ status: first!.status, input_tokens: first!.input_tokens, output_tokens: first!.output_tokens, settled: first!.settled });
    expect(first!.estimated_input_tokens).toBe(ESTIMATE);
  });
  it('[USE-02] [USE-04] an attempt its own gate cuts off after it sent (here a cancel) is billed unknown with its estimate, once, never left unrecorded', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    fake.enqueue(heldStreamReply([chunks.role(), chunks.text('cut'), chunks.finish('stop'), chunks.usage(30, 7)], { holdAfter: 2, release: held }));
    const { executionId } = await submit(t.engine, 'Summarize, then stop');
    await fake.waitForRequests(1);
    await eventually(async () => (await collect(t.engine, executionId)).some((e) => e.type === 'model.started'), 'the attempt to have started');
    await t.engine.cancel(executionId);
    expect(await t.engine.waitForEnd(executionId)).toBe('cancelled');
    release();
    const calls = await callRows(executionId);
    expect(calls.map((c) => [c.attempt, c.status])).toEqual([[1, 'failed']]);
    // The request went out: its tokens may have been used, so it is unknown with its estimate, never zero and never missing.
    expect((await usage(executionId)).map((u) => [u.call_id, u.status, u.input_tokens, u.output_tokens, u.estimated_input_tokens])).toEqual([[calls[0]!.id, 'unknown', null, null, ESTIMATE]]);
  });
  it('[PLAT-06] reads a Chat\'s Bot\'s model, its provider and the provider\'s sealed key ahead on the caller\'s connection, within the organization only; a missing provider reads as null', async () => {
    const other = newId();
    await t.database.query(`INSERT INTO organizations (id, name) VALUES ($1, 'model-calls-other')`, [other]);
    const [bot, goneBot, otherBot, chat, goneChat, otherChat] = [newId(), newId(), newId(), newId(), newId(), newId()];
    await t.database.query(
      `INSERT INTO bots (id, organization_id, name, model, instructions, tools) VALUES ($1, $4, 'ahead', 'fake/gpt-test', '', '[]'), ($2, $4, 'gone', 'missing/gpt-test', '', '[]'), ($3, $5, 'other', 'fake/gpt-test', '', '[]')`,
      [bot, goneBot, otherBot, organizationId, other],
    );
    await t.database.query(`INSERT INTO chats (id, organization_id, bot_id) VALUES ($1, $4, $5), ($2, $4, $6), ($3, $7, $8)`, [chat, goneChat, otherChat, organizationId, bot, goneBot, other, otherBot]);
    const ahead = await t.db.connection((db) => models.readAhead(db, organizationId, chat));
    expect(ahead?.model).toBe('fake/gpt-test');
    expect(ahead?.resolved).toMatchObject({ providerId, modelId: 'gpt-test', kind: 'openai-compatible' });
    // Its key's sealed record came with the read, and is opened at the send: the request carries the key.
    fake.enqueue(textReply(['Ahead'], [5, 1]));
    const provider = await ahead!.resolved!.connect({ actor: { kind: 'service', id: newId() } });
    const texts: string[] = [];
    for await (const event of provider.stream({ model: 'gpt-test', messages: [userMessage('Hi')], tools: [] })) if (event.type === 'text') texts.push(event.text);
    expect(texts.join('')).toBe('Ahead');
    // The last request is this stream's (an earlier test's late request may precede it).
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(await models.readAhead(t.db, organizationId, goneChat)).toEqual({ model: 'missing/gpt-test', resolved: null });
    // Another organization's Chat, or this Chat asked for by another organization: nothing.
    expect(await models.readAhead(t.db, organizationId, otherChat)).toBeNull();
    expect(await models.readAhead(t.db, other, chat)).toBeNull();
  });

  it('[USE-03] with no budget, credits or rate limit, each attempt holds its estimate plus max_tokens at the price in force, in the one statement that opens it; a later attempt releases the earlier hold', async () => {
    // 1 micro per input token and 2 per output token: 25 + 2 × 4,096 = 8,217 micros per attempt.
    const priceId = newId();
    await t.database.query(
      `INSERT INTO prices (id, organization_id, model, input_per_million_micros, output_per_million_micros, cached_input_per_million_micros, effective_from, set_by)
       VALUES ($1, $2, 'fake/gpt-test', 1000000, 2000000, 500000, now() - interval '1 minute', 'organization')`,
      [priceId, organizationId],
    );
    try {
      fake.enqueue(streamReply([chunks.role(), chunks.text('Partial'), chunks.finish('stop')], { dropAfter: 2 }), textReply(['Priced'], [20, 3]));
      const { executionId } = await submit(t.engine, 'Summarize at a price');
      expect(await t.engine.waitForEnd(executionId)).toBe('completed');
      const rows = await t.database.query<{ attempt: number; price_id: string | null; reserved_micros: string; reserved_tokens: string; released: boolean }>(
        'SELECT attempt, price_id, reserved_micros::text, reserved_tokens::text, released_at IS NOT NULL AS released FROM usage_holds WHERE execution_id = $1 ORDER BY attempt',
        [executionId],
      );
      const held = { price_id: priceId, reserved_micros: String(ESTIMATE + 2 * 4_096), reserved_tokens: String(ESTIMATE + 4_096), released: true };
      expect(rows).toEqual([
        { attempt: 1, ...held },
        { attempt: 2, ...held },
      ]);
    } finally {
      await t.database.query('DELETE FROM prices WHERE id = $1', [priceId]);
    }
  });
});

import { randomUUID } from 'node:crypto';
import type { MemberCaller } from '@openbot/domain';
import type { Json, Workflow } from '@openbot/engine';
import type { EngineNode } from '@openbot/engine/node';
import { ReleaseUsage, ReleaseUsageHandler } from '../../../libs/platform/src/billing/commands/release-usage.command';
import { reserve } from '../../../libs/platform/src/billing/reservations';
import type { Database } from '../../../libs/platform/src/database/sql';
import { usageHolds } from '../../../libs/platform/src/usage/usage-holds';
import { usageRecords, type UsageCall } from '../../../libs/platform/src/usage/usage-records';
import { startWorkflowKit, type WorkflowKit } from '../../support/workflow-kit';
import { deferred, eventually, forceTakeover, localRuns, OutsideService, SERVICE, type Deferred } from '../engine/helpers';

interface CallState {
  [key: string]: Json;
  answer: Json;
}

type Answer = { inputTokens: number; outputTokens: number };

/**
 * A model-like call billed the way ModelCalls bills it: each attempt reserves against the
 * credits before it sends (its hold names the price in force), the saved result records its
 * usage and its one charge in the result's transaction, and an attempt a new owner closes is
 * recorded unknown, keeping its reservation.
 */
function billedWorkflow(db: Database, outside: OutsideService<Answer>, node: string, organizationId: string, name = 'test.billed-credits'): Workflow<CallState, null> {
  return {
    name,
    initial: () => ({ answer: null }),
    next: (s) => (s.answer === null ? { phase: 'ask' } : { end: 'completed', result: s.answer }),
    phases: {
      ask: {
        async run(ctx) {
          const callKey = `${ctx.step}:model`;
          const billing = (callId: string, attempt: number): UsageCall => ({
            organizationId,
            scopeKind: SERVICE.kind,
            scopeId: SERVICE.id,
            botId: null,
            chatId: null,
            turnId: null,
            executionId: ctx.executionId,
            callId,
            model: 'test/model',
            estimatedInputTokens: 40,
            hold: { callKey, attempt },
          });
          const answer = await ctx.calls.call(
            'model',
            {
              safe: true,
              onAbandonedAttempt: (tx, abandoned) => usageRecords.recordUnsettled(tx, billing(abandoned.callId, abandoned.attempt)),
              commit: async (tx, saved) => {
                await usageRecords.record(tx, billing(saved.callId, saved.attempt), saved.result as Answer);
                await usageHolds.release(tx, ctx.executionId, callKey);
              },
            },
            async (request) => {
              const reservation = await reserve(db, {
                organizationId,
                scopeKind: SERVICE.kind,
                scopeId: SERVICE.id,
                botId: null,
                executionId: ctx.executionId,
                callKey,
                attempt: request.attempt,
                model: 'test/model',
                estimatedInputTokens: 40,
                maxTokens: 60,
              });
              if (!reservation.reserved) throw new Error('no credits left');
              return outside.send(request, node);
            },
          );
          return { state: { answer } };
        },
      },
    },
  };
}

describe('billing across a takeover', () => {
  let t: WorkflowKit;
  let a: EngineNode;
  let b: EngineNode;
  let outside: OutsideService<Answer>;
  /** Holds node A's requests until the test lets them answer (an owner frozen between the answer and its checkpoint). */
  let holdA: Deferred | null = null;
  const organizationId = randomUUID();
  /** An organization whose credits hold two reservations, not three. */
  const tight = randomUUID();

  beforeAll(async () => {
    t = await startWorkflowKit();
    await t.database.query(`INSERT INTO organizations (id, name) VALUES ($1, 'billing')`, [organizationId]);
    await t.database.query(`INSERT INTO credit_accounts (organization_id) VALUES ($1)`, [organizationId]);
    await t.database.query(`INSERT INTO credit_entries (id, organization_id, amount_micros, kind, reason) VALUES ($1, $2, 10000, 'grant', 'test')`, [randomUUID(), organizationId]);
    // 1 micro per input token, 2 per output token.
    await t.database.query(
      `INSERT INTO prices (id, organization_id, model, input_per_million_micros, output_per_million_micros, cached_input_per_million_micros, effective_from, set_by)
       VALUES ($1, $2, 'test/model', 1000000, 2000000, 1000000, now() - interval '1 minute', 'platform')`,
      [randomUUID(), organizationId],
    );
    await t.database.query(`INSERT INTO organizations (id, name) VALUES ($1, 'tight')`, [tight]);
    await t.database.query(`INSERT INTO credit_accounts (organization_id) VALUES ($1)`, [tight]);
    await t.database.query(`INSERT INTO credit_entries (id, organization_id, amount_micros, kind, reason) VALUES ($1, $2, 400, 'grant', 'test')`, [randomUUID(), tight]);
    await t.database.query(
      `INSERT INTO prices (id, organization_id, model, input_per_million_micros, output_per_million_micros, cached_input_per_million_micros, effective_from, set_by)
       VALUES ($1, $2, 'test/model', 1000000, 2000000, 1000000, now() - interval '1 minute', 'platform')`,
      [randomUUID(), tight],
    );
    outside = new OutsideService(async (request) => {
      if (request.from === 'A' && holdA) await holdA.promise;
      return request.from === 'A' ? { inputTokens: 31, outputTokens: 7 } : { inputTokens: 30, outputTokens: 5 };
    });
    a = t.engine;
    a.register(billedWorkflow(t.db, outside, 'A', organizationId));
    a.register(billedWorkflow(t.db, outside, 'A', tight, 'test.billed-tight'));
    b = (await t.node('node-b')).engine;
    b.register(billedWorkflow(t.db, outside, 'B', organizationId));
    b.register(billedWorkflow(t.db, outside, 'B', tight, 'test.billed-tight'));
    await a.start();
    await b.start();
  });
  afterAll(async () => {
    holdA?.resolve();
    await t.close();
  });

  const records = (executionId: string) =>
    t.database.query<{ id: string; status: string; cost_micros: string | null; reserved_micros: string | null }>(
      `SELECT u.id, u.status, u.cost_micros::text, u.reserved_micros::text FROM usage_records u JOIN execution_calls c ON c.id = u.call_id
        WHERE u.execution_id = $1 ORDER BY c.attempt`,
      [executionId],
    );
  const charges = () =>
    t.database.query<{ usage_record_id: string; amount_micros: string }>(
      `SELECT usage_record_id, amount_micros::text FROM credit_entries WHERE organization_id = $1 AND kind = 'charge' ORDER BY created_at`,
      [organizationId],
    );
  const openHolds = async (executionId: string) =>
    (await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_holds WHERE execution_id = $1 AND released_at IS NULL', [executionId]))[0]!.n;
  const reservedCredits = async () =>
    (
      await t.database.query<{ reserved: string }>(
        `SELECT ((SELECT coalesce(sum(reserved_micros), 0) FROM usage_holds WHERE organization_id = $1 AND released_at IS NULL)
               + (SELECT coalesce(sum(reserved_micros), 0) FROM usage_records WHERE organization_id = $1 AND status = 'unknown' AND released_at IS NULL))::text AS reserved`,
        [organizationId],
      )
    )[0]!.reserved;

  it('[USE-03] after a takeover exactly one charge is posted and the old hold is released; [USE-04] the old attempt stays unknown with its reservation until its late usage settles it once, with one charge', async () => {
    holdA = deferred();
    const { executionId } = await a.submit({ workflow: 'test.billed-credits', input: null, scope: SERVICE });
    await eventually(() => outside.requests.some((r) => r.from === 'A'), 'A to send its request');
    expect(await openHolds(executionId)).toBe(1);

    await forceTakeover(t.database, b, executionId, 1);
    expect(await b.waitForEnd(executionId)).toBe('completed');
    const [abandoned, own] = await records(executionId);
    // 40 input estimate × 1 + 60 max_tokens × 2 = 160 micros reserved by each attempt.
    expect(abandoned).toMatchObject({ status: 'unknown', cost_micros: null, reserved_micros: '160' });
    // 30 × 1 + 5 × 2 = 40 micros.
    expect(own).toMatchObject({ status: 'confirmed', cost_micros: '40' });
    expect(await openHolds(executionId)).toBe(0);
    expect(await charges()).toEqual([{ usage_record_id: own!.id, amount_micros: '-40' }]);
    // The unknown attempt keeps what it reserved on the credits (a silent provider cannot make them meaningless).
    expect(await reservedCredits()).toBe('160');

    holdA.resolve();
    await eventually(async () => (await records(executionId))[0]?.status === 'confirmed', 'the late usage to settle');
    await eventually(() => localRuns(a) === 0, 'node A to drop its lost run');
    // 31 × 1 + 7 × 2 = 45 micros, charged once; the reservation is gone.
    expect((await records(executionId))[0]).toMatchObject({ status: 'confirmed', cost_micros: '45' });
    expect(await charges()).toEqual([
      { usage_record_id: own!.id, amount_micros: '-40' },
      { usage_record_id: abandoned!.id, amount_micros: '-45' },
    ]);
    expect(await reservedCredits()).toBe('0');

    // The late result arriving again settles nothing twice and charges nothing twice.
    const call: UsageCall = {
      organizationId,
      scopeKind: SERVICE.kind,
      scopeId: SERVICE.id,
      botId: null,
      chatId: null,
      turnId: null,
      executionId,
      callId: (await t.database.query<{ call_id: string }>('SELECT call_id FROM usage_records WHERE id = $1', [abandoned!.id]))[0]!.call_id,
      model: 'test/model',
      estimatedInputTokens: 40,
      hold: { callKey: '1:model', attempt: 1 },
    };
    await usageRecords.record(t.db, call, { inputTokens: 999, outputTokens: 999 });
    expect((await records(executionId))[0]).toMatchObject({ status: 'confirmed', cost_micros: '45' });
    expect(await charges()).toHaveLength(2);
  });

  it('[USE-04] an owner releases the abandoned attempt: its reservation is charged once, and its late usage then fills in its tokens without charging again', async () => {
    holdA = deferred();
    const sentByA = () => outside.requests.filter((r) => r.from === 'A').length;
    const before = sentByA();
    const { executionId } = await a.submit({ workflow: 'test.billed-credits', input: null, scope: SERVICE });
    await eventually(() => sentByA() === before + 1, 'A to send its request');
    await forceTakeover(t.database, b, executionId, 1);
    expect(await b.waitForEnd(executionId)).toBe('completed');
    const [abandoned, own] = await records(executionId);
    expect(abandoned).toMatchObject({ status: 'unknown', cost_micros: null, reserved_micros: '160' });
    const chargesOf = async () =>
      (await charges()).filter((c) => c.usage_record_id === abandoned!.id || c.usage_record_id === own!.id).map((c) => [c.usage_record_id, c.amount_micros]);

    const owner = { kind: 'member', organizationId, memberId: randomUUID(), role: 'owner', apiKeyId: null, permissions: ['billing.manage'] } as unknown as MemberCaller;
    const release = new ReleaseUsageHandler(t.db);
    const released = await release.execute(new ReleaseUsage(owner, abandoned!.id));
    expect(released).toMatchObject({ id: abandoned!.id, costMicros: 160 });
    expect(await chargesOf()).toEqual([
      [own!.id, '-40'],
      [abandoned!.id, '-160'],
    ]);

    // The late result settles the record (its tokens) once; its cost stays the charged reservation, charged once.
    holdA.resolve();
    await eventually(async () => (await records(executionId))[0]?.status === 'confirmed', 'the late usage to settle');
    await eventually(() => localRuns(a) === 0, 'node A to drop its lost run');
    expect((await records(executionId))[0]).toMatchObject({ status: 'confirmed', cost_micros: '160' });
    const tokens = await t.database.query<{ input_tokens: number; output_tokens: number }>('SELECT input_tokens, output_tokens FROM usage_records WHERE id = $1', [abandoned!.id]);
    expect(tokens).toEqual([{ input_tokens: 31, output_tokens: 7 }]);
    expect(await chargesOf()).toEqual([
      [own!.id, '-40'],
      [abandoned!.id, '-160'],
    ]);
    // Settled, it has nothing left to release.
    await expect(release.execute(new ReleaseUsage(owner, abandoned!.id))).rejects.toMatchObject({ type: 'UsageSettled' });
  });

  it('[USE-03] the new attempt after a takeover does not count the old attempt twice: its hold is released before the sums are read, its unknown record alone keeps the reservation', async () => {
    holdA = deferred();
    const sentByA = () => outside.requests.filter((r) => r.from === 'A').length;
    const before = sentByA();
    const { executionId } = await a.submit({ workflow: 'test.billed-tight', input: null, scope: SERVICE });
    await eventually(() => sentByA() === before + 1, 'A to send its request');
    // 400 micros: the abandoned attempt keeps 160, the new one needs 160; counted twice they would not fit.
    await forceTakeover(t.database, b, executionId, 1);
    expect(await b.waitForEnd(executionId)).toBe('completed');
    const charged = await t.database.query<{ amount_micros: string }>(`SELECT amount_micros::text FROM credit_entries WHERE organization_id = $1 AND kind = 'charge'`, [tight]);
    expect(charged).toEqual([{ amount_micros: '-40' }]);
    holdA.resolve();
    await eventually(() => localRuns(a) === 0, 'node A to drop its lost run');
  });
});

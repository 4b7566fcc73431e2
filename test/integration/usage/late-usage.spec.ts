import { randomUUID } from 'node:crypto';
import type { Json, Workflow } from '@openbot/engine';
import type { EngineNode } from '@openbot/engine/node';
import { usageRecords, type UsageCall } from '../../../libs/platform/src/usage/usage-records';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, eventually, forceTakeover, localRuns, OutsideService, SERVICE, type Deferred } from '../engine/helpers';

interface CallState {
  [key: string]: Json;
  answer: Json;
}

/**
 * One safe model-like call, billed the way a Turn's model phase bills it: the saved result
 * records its usage in the result's transaction; an attempt a new owner closes without its
 * result is recorded `unknown` with its estimate (USE-04).
 */
function billedWorkflow(outside: OutsideService<{ inputTokens: number; outputTokens: number }>, node: string, organizationId: string): Workflow<CallState, null> {
  return {
    name: 'test.billed',
    initial: () => ({ answer: null }),
    next: (s) => (s.answer === null ? { phase: 'ask' } : { end: 'completed', result: s.answer }),
    phases: {
      ask: {
        async run(ctx) {
          const billing = (callId: string): UsageCall => ({
            organizationId,
            scopeKind: SERVICE.kind,
            scopeId: SERVICE.id,
            botId: null,
            chatId: null,
            turnId: null,
            executionId: ctx.executionId,
            callId,
            model: 'test-model',
            estimatedInputTokens: 40,
          });
          const answer = await ctx.calls.call(
            'model',
            {
              safe: true,
              onAbandonedAttempt: (tx, abandoned) => usageRecords.recordUnsettled(tx, billing(abandoned.callId)),
              commit: async (tx, saved) => void (await usageRecords.record(tx, billing(saved.callId), saved.result as { inputTokens: number; outputTokens: number })),
            },
            (request) => outside.send(request, node),
          );
          return { state: { answer } };
        },
      },
    },
  };
}

interface UsageRow {
  call_id: string;
  status: string;
  input_tokens: number | null;
  output_tokens: number | null;
  estimated_input_tokens: number | null;
  settled_at: Date | null;
}

describe('usage: late confirmed usage', () => {
  let t: TestEngine;
  let a: EngineNode;
  let b: EngineNode;
  let outside: OutsideService<{ inputTokens: number; outputTokens: number }>;
  /** Holds node A's requests until the test lets them answer (an owner frozen mid-call). */
  let holdA: Deferred | null = null;
  const organizationId = randomUUID();

  beforeAll(async () => {
    t = await startTestEngine();
    await t.database.query(`INSERT INTO organizations (id, name) VALUES ($1, 'usage')`, [organizationId]);
    outside = new OutsideService(async (request) => {
      if (request.from === 'A' && holdA) await holdA.promise;
      return request.from === 'A' ? { inputTokens: 31, outputTokens: 7 } : { inputTokens: 30, outputTokens: 5 };
    });
    a = t.engine;
    a.register(billedWorkflow(outside, 'A', organizationId));
    b = (await t.node('node-b')).engine;
    b.register(billedWorkflow(outside, 'B', organizationId));
    await a.start();
    await b.start();
  });
  afterAll(async () => {
    holdA?.resolve();
    await t.close();
  });

  const usageOf = (executionId: string) =>
    t.database.query<UsageRow>(
      `SELECT u.call_id, u.status, u.input_tokens, u.output_tokens, u.estimated_input_tokens, u.settled_at
         FROM usage_records u JOIN execution_calls c ON c.id = u.call_id WHERE u.execution_id = $1 ORDER BY c.attempt`,
      [executionId],
    );

  it('[USE-04] an attempt closed by a takeover is unknown with its estimate; its late result settles it confirmed exactly once, however often it arrives (CALL-05)', async () => {
    holdA = deferred();
    const { executionId } = await a.submit({ workflow: 'test.billed', input: null, scope: SERVICE });
    await eventually(() => outside.requests.some((r) => r.from === 'A'), 'A to send its request');

    // B takes over, closes A's open attempt and completes with its own.
    await forceTakeover(t.database, b, executionId, 1);
    expect(await b.waitForEnd(executionId)).toBe('completed');
    const [abandoned, own] = await usageOf(executionId);
    expect(abandoned).toMatchObject({ status: 'unknown', input_tokens: null, output_tokens: null, estimated_input_tokens: 40, settled_at: null });
    expect(own).toMatchObject({ status: 'confirmed', input_tokens: 30, output_tokens: 5, estimated_input_tokens: 40 });

    // A's answer arrives late: the call log keeps it, and the unknown record settles with its usage.
    holdA.resolve();
    await eventually(async () => (await usageOf(executionId))[0]?.status === 'confirmed', 'the late usage to settle');
    await eventually(() => localRuns(a) === 0, 'node A to drop its lost run');
    const settled = await usageOf(executionId);
    expect(settled).toHaveLength(2);
    expect(settled[0]).toMatchObject({ call_id: abandoned!.call_id, status: 'confirmed', input_tokens: 31, output_tokens: 7, estimated_input_tokens: 40 });
    expect(settled[0]!.settled_at).toBeInstanceOf(Date);
    expect(settled[1]).toEqual(own);

    // The same late result arriving again (a redelivery) settles nothing twice.
    const [{ xmin }] = await t.database.query<{ xmin: string }>('SELECT xmin::text FROM usage_records WHERE call_id = $1', [abandoned!.call_id]);
    const call: UsageCall = {
      organizationId,
      scopeKind: SERVICE.kind,
      scopeId: SERVICE.id,
      botId: null,
      chatId: null,
      turnId: null,
      executionId,
      callId: abandoned!.call_id,
      model: 'test-model',
      estimatedInputTokens: 40,
    };
    await usageRecords.record(t.pool, call, { inputTokens: 999, outputTokens: 999 });
    await usageRecords.recordUnsettled(t.pool, call);
    expect(await usageOf(executionId)).toEqual(settled);
    const [again] = await t.database.query<{ xmin: string }>('SELECT xmin::text FROM usage_records WHERE call_id = $1', [abandoned!.call_id]);
    expect(again!.xmin).toBe(xmin);
  });

  it('[USE-04] a result without usage stays unknown with its estimate, never zero, however often it is saved', async () => {
    const call: UsageCall = {
      organizationId,
      scopeKind: SERVICE.kind,
      scopeId: SERVICE.id,
      botId: null,
      chatId: null,
      turnId: null,
      executionId: randomUUID(),
      callId: randomUUID(),
      model: 'test-model',
      estimatedInputTokens: 12,
    };
    await usageRecords.record(t.pool, call, null);
    await usageRecords.record(t.pool, call, null);
    const rows = await t.database.query<UsageRow>('SELECT status, input_tokens, output_tokens, estimated_input_tokens, settled_at FROM usage_records WHERE call_id = $1', [call.callId]);
    expect(rows).toEqual([{ status: 'unknown', input_tokens: null, output_tokens: null, estimated_input_tokens: 12, settled_at: null }]);
  });
});

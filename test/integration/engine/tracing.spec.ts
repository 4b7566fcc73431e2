import type { Json, Workflow } from '@openbot/engine';
import type { EngineNode } from '@openbot/engine/node';
import { OpenbotTracing, type RuntimeConfig } from '@openbot/platform';
import { OtlpReceiver } from '../../support/otlp-receiver';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { eventually, forceTakeover, localRuns, OutsideService, SERVICE } from './helpers';

interface State {
  [key: string]: Json;
  answer: Json;
  done: boolean;
}

/** One phase with one outside call; its answer becomes the result. */
function callWorkflow(outside: OutsideService, node: string): Workflow<State, Json> {
  return {
    name: 'test.traced',
    initial: () => ({ answer: null, done: false }),
    next: (s) => (s.done ? { end: 'completed', result: s.answer } : { phase: 'work' }),
    phases: {
      work: {
        run: async (ctx) => {
          const answer = await ctx.calls.call('op', { safe: true, kind: 'tool' }, (request) => outside.send(request, node));
          return { state: { answer, done: true } };
        },
      },
    },
  };
}

/**
 * The engine's tracing port with the product's OpenTelemetry implementation and a real OTLP/HTTP
 * receiver (docs/decisions/040-traces.md): the phase spans of one execution, on two nodes across
 * a takeover, are in one trace whose ID is the execution ID.
 */
describe('engine: traces across a takeover', () => {
  let receiver: OtlpReceiver;
  let tracing: OpenbotTracing;
  let t: TestEngine;
  let a: EngineNode;
  let b: EngineNode;
  const outside = new OutsideService((request) => ({ from: request.from, attempt: request.attempt }));

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    tracing = new OpenbotTracing({ traces: { url: `${receiver.url}/v1/traces`, serviceName: 'engine-test' }, nodeId: 'node-a' } as RuntimeConfig);
    t = await startTestEngine({ tracing });
    a = t.engine;
    b = (await t.node('node-b', { tracing })).engine;
    a.register(callWorkflow(outside, 'A'));
    b.register(callWorkflow(outside, 'B'));
    await a.start();
    await b.start();
  });
  afterAll(async () => {
    await t?.close();
    await tracing?.onApplicationShutdown();
    await receiver?.close();
  });

  it('a phase run after a takeover has the new generation and the same trace as the lost one; its call span is its child', async () => {
    // Node A saves the call's result, then dies before its checkpoint commits; B takes over.
    t.faults.arm('checkpoint.before-commit', { kind: 'throw', error: new Error('node A dies before its checkpoint') });
    const { executionId } = await a.submit({ workflow: 'test.traced', input: null, scope: SERVICE });
    await eventually(() => localRuns(a) === 0, 'node A to lose its run');
    await forceTakeover(t.database, b, executionId, 1);
    expect(await b.waitForEnd(executionId)).toBe('completed');
    await tracing.flush();

    const traceId = executionId.replace(/-/g, '');
    const phases = receiver.spans().filter((s) => s.attributes['openbot.execution.id'] === executionId && s.attributes['openbot.phase'] === 'work');
    expect(phases.map((p) => [p.traceId, p.attributes['openbot.execution.generation'], p.name])).toEqual([
      [traceId, 1, 'test.traced work'],
      [traceId, 2, 'test.traced work'],
    ]);
    // Both hang from the execution's own (never exported) parent: the trace links them whatever node ran them.
    expect(new Set(phases.map((p) => p.parentSpanId)).size).toBe(1);
    // A's phase ran to its result (its checkpoint was what failed); B's ran again and was saved.
    expect(phases.map((p) => p.attributes['openbot.phase.outcome'])).toEqual(['succeeded', 'succeeded']);
    // A's call went out (one attempt) as a child of A's phase; B reused its saved result and sent nothing.
    const calls = receiver.spans().filter((s) => s.attributes['openbot.execution.id'] === executionId && s.attributes['openbot.call.kind'] === 'tool');
    expect(calls.map((c) => [c.parentSpanId, c.attributes['openbot.call.attempt']])).toEqual([[phases[0]!.spanId, 1]]);
    expect(outside.requests.map((r) => r.from)).toEqual(['A']);
  });
});

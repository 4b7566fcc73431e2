import { type Engine, type EngineMetrics, type Json, type PhaseMetricOutcome, type TakeoverCause, type Workflow } from '@openbot/engine';
import { advanceQueueDepth, executionCountsByState } from '@openbot/engine/node';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, eventually, executionRow, SERVICE, waitForState, type Deferred } from './helpers';

/** What the engine reported through its metrics port (docs/decisions/034-metrics.md). */
class RecordedMetrics implements EngineMetrics {
  readonly phases: Array<{ workflow: string; outcome: PhaseMetricOutcome }> = [];
  readonly takeovers: TakeoverCause[] = [];
  readonly batches: number[] = [];
  readonly ended: Array<{ workflow: string; state: string }> = [];
  phaseEnded(workflow: string, outcome: PhaseMetricOutcome): void {
    this.phases.push({ workflow, outcome });
  }
  takeover(cause: TakeoverCause): void {
    this.takeovers.push(cause);
  }
  eventBatchWritten(executions: number): void {
    this.batches.push(executions);
  }
  executionEnded(workflow: string, state: string): void {
    this.ended.push({ workflow, state });
  }
}

/** One phase that emits an event while running, then waits for the test or its gate closing. */
function heldWorkflow(gates: Map<string, Deferred>): Workflow<{ [key: string]: Json; done: boolean }, null> {
  return {
    name: 'test.metrics_held',
    initial: () => ({ done: false }),
    next: (s) => (s.done ? { end: 'completed', result: null } : { phase: 'work' }),
    phases: {
      work: {
        async run(ctx) {
          ctx.publisher.publish('test.progress', { generation: ctx.generation });
          await ctx.publisher.flush();
          const gate = gates.get(`${ctx.executionId}#${ctx.generation}`) ?? deferred();
          gates.set(`${ctx.executionId}#${ctx.generation}`, gate);
          await Promise.race([
            gate.promise,
            new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error(String(ctx.signal.reason))), { once: true })),
          ]);
          return { state: { done: true } };
        },
      },
    },
  };
}

describe('engine: the metrics port reports phases, takeovers by cause, event batches and ends (decision 034)', () => {
  let t: TestEngine;
  const gates = new Map<string, Deferred>();
  const nodeA = new RecordedMetrics();

  beforeAll(async () => {
    t = await startTestEngine({ leaseSeconds: 120, deadNodes: false, metrics: nodeA });
    t.engine.register(heldWorkflow(gates));
    await t.engine.start();
  });
  afterAll(async () => {
    for (const gate of gates.values()) gate.resolve();
    await t.close();
  });

  async function peer(nodeId: string, options: Parameters<TestEngine['node']>[1]): Promise<{ engine: Engine; metrics: RecordedMetrics; stop(): Promise<void> }> {
    const metrics = new RecordedMetrics();
    const node = await t.node(nodeId, { ...options, metrics });
    node.engine.register(heldWorkflow(gates));
    await node.engine.start();
    return { engine: node.engine, metrics, stop: () => node.stop() };
  }

  it('[REL-01] a takeover from an owner found dead counts as dead_node; the new owner reports its phase, its event writes and the end', async () => {
    // node-a runs without presence (as a dead process looks) and holds a two-minute lease.
    const { executionId } = await t.engine.submit({ workflow: 'test.metrics_held', input: null, scope: SERVICE });
    await eventually(() => gates.has(`${executionId}#1`), 'the first attempt on node-a');
    // The scrape-time reads: the running execution by workflow and state, and its recovery job deferred to after its lease.
    expect(await executionCountsByState(t.pool)).toEqual([{ workflow: 'test.metrics_held', state: 'running', count: 1 }]);
    expect(await advanceQueueDepth(t.pool)).toMatchObject({ queue: 'execution-advance', deferred: 1 });
    const b = await peer('node-b', { leaseSeconds: 120, deadNodes: { everyMs: 50, graceMs: 200 } });
    await eventually(() => gates.has(`${executionId}#2`), 'node-b to take the execution over');
    expect(b.metrics.takeovers).toEqual(['dead_node']);
    expect(nodeA.takeovers).toEqual([]);
    gates.get(`${executionId}#2`)!.resolve();
    await waitForState(b.engine, executionId, ['completed']);
    // The end is counted once its commit's reply reached node-b, which may be just after a reader saw the commit.
    await eventually(() => b.metrics.ended.length > 0, 'node-b to count the end');
    expect(b.metrics.phases).toEqual([{ workflow: 'test.metrics_held', outcome: 'succeeded' }]);
    expect(b.metrics.ended).toEqual([{ workflow: 'test.metrics_held', state: 'completed' }]);
    expect(b.metrics.batches.length).toBeGreaterThanOrEqual(1);
    expect(b.metrics.batches.every((n) => n >= 1)).toBe(true);
    gates.get(`${executionId}#1`)!.resolve();
    await b.stop();
  });

  it('[EXE-03] a takeover of a lease that ran out (handed back at a graceful stop) counts as lease_expired; the stopped owner reports its phase drained', async () => {
    const owner = await peer('node-c', { leaseSeconds: 120, deadNodes: false });
    const { executionId } = await owner.engine.submit({ workflow: 'test.metrics_held', input: null, scope: SERVICE });
    await eventually(() => gates.has(`${executionId}#1`), 'the first attempt on node-c');
    const taker = await peer('node-d', { leaseSeconds: 120, deadNodes: false, pollingSeconds: 0.5 });
    await owner.stop();
    expect(owner.metrics.phases).toEqual([{ workflow: 'test.metrics_held', outcome: 'drained' }]);
    await eventually(() => gates.has(`${executionId}#2`), 'a running node to claim the handed-back lease');
    // node-a or node-d: whichever job worker came first took it over, once.
    const row = await executionRow(t.database, executionId);
    expect(row).toMatchObject({ owner_node: expect.stringMatching(/^node-[ad]$/), generation: 2 });
    expect([...nodeA.takeovers, ...taker.metrics.takeovers]).toEqual(['lease_expired']);
    gates.get(`${executionId}#2`)!.resolve();
    await waitForState(taker.engine, executionId, ['completed']);
  });
});

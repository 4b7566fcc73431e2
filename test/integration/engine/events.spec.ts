import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ExecutionEvent, Json, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, eventually, SERVICE, waitForState, type Deferred } from './helpers';

interface EmitterState {
  [key: string]: Json;
  round: number;
  rounds: number;
  perRound: number;
  /** Wait for a `next` signal between rounds (so an observer sees the log grow over time). */
  paced: boolean;
  /** Hold each round until the test releases it. */
  held: boolean;
}

type EmitterInput = Record<string, number | boolean>;

/** Each round emits `perRound` text deltas with their model step and attempt, plus one plain event. */
function emitterWorkflow(hold: () => Deferred): Workflow<EmitterState, EmitterInput> {
  return {
    name: 'test.emitter',
    initial: (input) => ({
      round: 0,
      rounds: Number(input.rounds ?? 3),
      perRound: Number(input.perRound ?? 2),
      paced: input.paced === true,
      held: input.held === true,
    }),
    next: (s) => (s.round < s.rounds ? { phase: 'emit' } : { end: 'completed', result: s.round }),
    phases: {
      emit: {
        async run(ctx) {
          const s = ctx.state;
          if (s.held) await hold().promise;
          for (let i = 0; i < s.perRound; i++) ctx.emit('text.delta', { text: `r${s.round}-${i}` }, { step: s.round + 1, attempt: 1 + (i % 2) });
          ctx.emit('round.done', { round: s.round });
          const state = { ...s, round: s.round + 1 };
          return s.paced && state.round < s.rounds ? { state, wait: { signals: ['next'] } } : { state };
        },
      },
    },
  };
}

async function collect(iterable: AsyncIterable<ExecutionEvent>, until?: (e: ExecutionEvent) => boolean): Promise<ExecutionEvent[]> {
  const events: ExecutionEvent[] = [];
  for await (const event of iterable) {
    events.push(event);
    if (until?.(event)) break;
  }
  return events;
}

describe('engine: reading events', () => {
  let t: TestEngine;
  let hold = deferred();

  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(emitterWorkflow(() => hold));
    await t.engine.start();
  });
  afterAll(async () => {
    hold.resolve();
    await t.close();
  });

  const submit = (input: EmitterInput) => t.engine.submit({ workflow: 'test.emitter', input, scope: SERVICE });

  it('[EVT-01] events have sequence numbers 1..n without gaps; text events keep their step and attempt', async () => {
    const { executionId } = await submit({ rounds: 3, perRound: 3 });
    const events = await collect(t.engine.observe(executionId));
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    const deltas = events.filter((e) => e.type === 'text.delta');
    expect(deltas.map((e) => [e.text, e.step, e.attempt])).toEqual([
      ['r0-0', 1, 1],
      ['r0-1', 1, 2],
      ['r0-2', 1, 1],
      ['r1-0', 2, 1],
      ['r1-1', 2, 2],
      ['r1-2', 2, 1],
      ['r2-0', 3, 1],
      ['r2-1', 3, 2],
      ['r2-2', 3, 1],
    ]);
    // Events without a position carry none.
    const plain = events.find((e) => e.type === 'round.done')!;
    expect(plain).not.toHaveProperty('step');
    expect(plain).not.toHaveProperty('attempt');
    // The stored rows agree: unique, gapless, and step/attempt kept in clear.
    const rows = await t.database.query<{ seq: number; step: number | null; attempt: number | null }>(
      'SELECT seq, step, attempt FROM execution_events WHERE execution_id = $1 ORDER BY seq',
      [executionId],
    );
    expect(rows.map((r) => r.seq)).toEqual(events.map((e) => e.seq));
  });

  it('[EVT-01] concurrent executions each keep their own gapless sequence', async () => {
    const ids = await Promise.all(Array.from({ length: 6 }, () => submit({ rounds: 4, perRound: 5 })));
    for (const { executionId } of ids) {
      const events = await collect(t.engine.observe(executionId));
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 4 * 6 + 1 }, (_, i) => i + 1));
      expect(events.filter((e) => e.type === 'round.done').map((e) => e.round)).toEqual([0, 1, 2, 3]);
    }
  });

  it('[EVT-01] events a phase publishes while it runs reach a reader on the same node in memory and a reader on another node from the table, identically', async () => {
    const streaming: Workflow<{ [key: string]: Json; done: boolean }, Json> = {
      name: 'test.streamer',
      initial: () => ({ done: false }),
      next: (s) => (s.done ? { end: 'completed' } : { phase: 'stream' }),
      phases: {
        stream: {
          async run(ctx) {
            ctx.emit('checkpoint.event', { n: 0 });
            for (let i = 0; i < 40; i++) {
              ctx.publisher.publish('text.delta', { text: `t${i}` }, { step: 1, attempt: 1 });
              if (i % 7 === 0) await ctx.publisher.flush();
            }
            await ctx.publisher.flush();
            return { state: { done: true } };
          },
        },
      },
    };
    t.engine.register(streaming);
    const other = await startTestEngine({ database: t.database, nodeId: 'events-reader-b', sealer: t.sealer });
    try {
      other.engine.register(streaming);
      await other.engine.start();
      const { executionId } = await t.engine.submit({ workflow: 'test.streamer', input: null, scope: SERVICE });
      const [local, remote] = await Promise.all([collect(t.engine.observe(executionId)), collect(other.engine.observe(executionId))]);
      expect(local.map((e) => e.seq)).toEqual(Array.from({ length: local.length }, (_, i) => i + 1));
      expect(local).toHaveLength(42);
      expect(local.filter((e) => e.type === 'text.delta').map((e) => e.text)).toEqual(Array.from({ length: 40 }, (_, i) => `t${i}`));
      expect(remote).toEqual(local);
    } finally {
      await other.close();
    }
  });

  it('[EVT-02] an observer that subscribes after the end reads everything again from its cursor', async () => {
    const { executionId } = await submit({ rounds: 2, perRound: 2 });
    const first = await collect(t.engine.observe(executionId));
    expect(first.at(-1)?.type).toBe('execution.ended');
    const again = await collect(t.engine.observe(executionId));
    expect(again).toEqual(first);
    const fromCursor = await collect(t.engine.observe(executionId, 3));
    expect(fromCursor).toEqual(first.slice(3));
    // A cursor at the end answers nothing more (no replay from zero, no hang).
    expect(await collect(t.engine.observe(executionId, first.length))).toEqual([]);
    expect(await collect(t.engine.observe(executionId, first.length - 1))).toEqual([first.at(-1)]);
  });

  it('[EVT-02] an observer on a node that gets no notifications still receives every event (fallback poll)', async () => {
    // Node B never starts: no LISTEN connection, so no notification ever reaches it.
    const b = await t.node('node-b-deaf');
    const { executionId } = await submit({ rounds: 3, perRound: 2, paced: true });
    const seen: ExecutionEvent[] = [];
    const reading = (async () => {
      for await (const event of b.engine.observe(executionId)) seen.push(event);
    })();
    for (let round = 1; round < 3; round++) {
      // Let B catch up on the log as it is now, then grow it.
      await eventually(async () => {
        const [row] = await t.database.query<{ last_seq: number; state: string }>(
          'SELECT s.last_seq, x.state FROM executions x JOIN execution_event_seqs s ON s.execution_id = x.id WHERE x.id = $1',
          [executionId],
        );
        return row!.state === 'waiting' && seen.length === row!.last_seq;
      }, `node B to read round ${round}`);
      expect(await t.engine.signal(executionId, 'next', null)).toBe(true);
    }
    await reading;
    expect(seen.map((e) => e.seq)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect(seen.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(seen).toEqual(await collect(t.engine.observe(executionId)));
  }, 90_000);

  it('[RES-03] an observer closing its stream does not cancel the phase', async () => {
    hold = deferred();
    const { executionId } = await submit({ rounds: 2, perRound: 1, held: true });
    const stop = new AbortController();
    const reading = collect(t.engine.observe(executionId, 0, stop.signal));
    await waitForState(t.engine, executionId, ['running']);
    stop.abort();
    expect(await reading).toEqual([]);
    // An iterator the consumer returns early also only stops reading.
    const iterator = t.engine.observe(executionId);
    const pending = iterator.next();
    hold.resolve();
    expect((await pending).value).toMatchObject({ seq: 1, type: 'text.delta' });
    await iterator.return(undefined);
    expect(await waitForState(t.engine, executionId, ['completed', 'failed', 'cancelled', 'interrupted'])).toMatchObject({ state: 'completed' });
    expect((await collect(t.engine.observe(executionId))).map((e) => e.type)).toEqual(['text.delta', 'round.done', 'text.delta', 'round.done', 'execution.ended']);
  });

  it('[EVT-02] a reader that never reads again: the node buffers at most 512 of 20,000 events of 8 KiB for it, and its heap does not grow by what was written', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const listener = (t.engine as unknown as { listener: { bufferedEvents(id: string): number } }).listener;
    const total = 20_000;
    const text = 'x'.repeat(8 * 1024);
    let mostBuffered = 0;
    const start = deferred();
    t.engine.register({
      name: 'test.bulk',
      initial: () => ({ done: false }),
      next: (s: { done: boolean }) => (s.done ? { end: 'completed' } : { phase: 'publish' }),
      phases: {
        publish: {
          async run(ctx) {
            await start.promise;
            for (let i = 0; i < total; i++) {
              ctx.publisher.publish('text.delta', { text }, { step: 1, attempt: 1 });
              if (i % 200 === 199) {
                await ctx.publisher.flush();
                // Delivered to the node's buffer by now: what it holds for its readers of this execution.
                mostBuffered = Math.max(mostBuffered, listener.bufferedEvents(ctx.executionId));
              }
            }
            return { state: { done: true } };
          },
        },
      },
    } as Workflow<{ [key: string]: Json; done: boolean }, null>);
    const { executionId } = await t.engine.submit({ workflow: 'test.bulk', input: null, scope: SERVICE });
    // The reader takes the first event and then never reads again.
    const iterator = t.engine.observe(executionId);
    const first = iterator.next();
    start.resolve();
    expect((await first).value).toMatchObject({ seq: 1, type: 'text.delta' });
    gc();
    const before = getHeapStatistics().used_heap_size;
    expect(await waitForState(t.engine, executionId, ['completed', 'failed', 'cancelled', 'interrupted'], 300_000)).toMatchObject({ state: 'completed' });
    const [{ n }] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM execution_events WHERE execution_id = $1', [executionId]);
    expect(n).toBe(total + 1);
    // The buffer filled up to its bound and no further (an unbounded one holds thousands here).
    expect(mostBuffered).toBe(512);
    expect(listener.bufferedEvents(executionId)).toBeLessThanOrEqual(512);
    gc();
    // 20,000 × 8 KiB is 160 MiB: a buffer that kept them would grow the heap far past this.
    expect(getHeapStatistics().used_heap_size - before).toBeLessThan(48 * 1024 * 1024);
    // The paused reader resumes where it stopped and reads the whole log in order.
    let expected = 2;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      expect(next.value.seq).toBe(expected);
      expected += 1;
    }
    expect(expected).toBe(n + 1);
  }, 600_000);
});

import { GateClosed, type Engine, type ExecutionEvent, type Json, type Workflow } from '@openbot/engine';
import type { EngineNode } from '@openbot/engine/node';
import { RELEASE_ATTEMPTS } from '@openbot/engine/node';
import { associatedData } from '@openbot/platform';
import { Client } from 'pg';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, eventually, executionRow, localRuns, OutsideService, SERVICE, waitForState, type Deferred } from './helpers';

const FINAL = ['completed', 'failed', 'cancelled', 'interrupted'] as const;

/** What the workflows of this file did, in order, per execution. */
class Journal {
  private readonly entries = new Map<string, string[]>();
  add(id: string, entry: string): void {
    const list = this.entries.get(id) ?? [];
    list.push(entry);
    this.entries.set(id, list);
  }
  of(id: string): string[] {
    return this.entries.get(id) ?? [];
  }
}

async function readAll(engine: Engine, id: string): Promise<ExecutionEvent[]> {
  const events: ExecutionEvent[] = [];
  for await (const event of engine.observe(id, 0, undefined, false)) events.push(event);
  return events;
}

interface Flags {
  [key: string]: Json;
  done: boolean;
}

/** Holds one phase open until its gate closes (or the test says `finish`); opens a resource first. */
function blockerWorkflow(journal: Journal, outside: OutsideService, release: () => Deferred): Workflow<Flags, null> {
  return {
    name: 'test.blocker',
    initial: () => ({ done: false }),
    next: (s) => (s.done ? { end: 'completed', result: 'finished' } : { phase: 'block' }),
    phases: {
      block: {
        async run(ctx) {
          ctx.resources.defer(() => journal.add(ctx.executionId, 'resource closed'));
          journal.add(ctx.executionId, 'started');
          const aborted = new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
          const finished = await Promise.race([aborted.then(() => false), release().promise.then(() => true)]);
          if (finished) return { state: { done: true } };
          journal.add(ctx.executionId, `aborted:${String(ctx.signal.reason)}`);
          await release().promise;
          // Work that tries to send after the gate closed starts nothing (EXE-11).
          try {
            await ctx.calls.call('late', { safe: true }, (request) => outside.send(request, 'late'));
            journal.add(ctx.executionId, 'late call sent');
          } catch (error) {
            journal.add(ctx.executionId, error instanceof GateClosed ? `late call refused:${error.reason}` : `late call failed:${String(error)}`);
            throw error;
          }
          return { state: { done: true } };
        },
      },
    },
  };
}

/** Always throws; retried with backoff. */
function flakyWorkflow(journal: Journal): Workflow<Flags, null> {
  return {
    name: 'test.flaky',
    initial: () => ({ done: false }),
    next: (s) => (s.done ? { end: 'completed' } : { phase: 'try' }),
    phases: {
      try: {
        retries: 8,
        async run(ctx) {
          journal.add(ctx.executionId, 'attempt');
          throw new Error('always fails');
        },
      },
    },
  };
}

interface ParentState {
  [key: string]: Json;
  spawned: boolean;
  children: string[];
  notices: Json;
  childInput: Json;
  attached: boolean;
  count: number;
  wait: 'children' | 'signal' | 'none';
}

/** Starts `count` children (attached or not), then waits for them, for a signal, or ends at once. */
function parentWorkflow(): Workflow<ParentState, { count: number; attached: boolean; wait: ParentState['wait']; child: string }> {
  return {
    name: 'test.parent',
    initial: ({ count, attached, wait, child }) => ({ spawned: false, children: [], notices: null, childInput: child, attached, count, wait }),
    next: (s) => (s.spawned && s.notices !== null ? { end: 'completed', result: s.notices } : { phase: s.spawned ? 'collect' : 'spawn' }),
    phases: {
      spawn: {
        async run(ctx) {
          const s = ctx.state;
          const children = Array.from({ length: s.count }, () => ctx.startChild({ workflow: s.childInput as string, input: null, attached: s.attached }));
          const state = { ...s, spawned: true, children };
          if (s.wait === 'children') return { state, wait: { children: true } };
          if (s.wait === 'signal') return { state, wait: { signals: ['parent.go'] } };
          return { state: { ...state, notices: [] } };
        },
      },
      collect: {
        async run(ctx) {
          const notices = (ctx.wake?.children ?? []).map((c) => ({ childId: c.childId, state: c.state }));
          return { state: { ...ctx.state, notices: notices.sort((x, y) => x.childId.localeCompare(y.childId)) } };
        },
      },
    },
  };
}

/** Waits for a `finish` signal, then completes (a child that simply lives on). */
const sleeperWorkflow: Workflow<Flags, null> = {
  name: 'test.sleeper',
  initial: () => ({ done: false }),
  next: (s) => (s.done ? { end: 'completed', result: 'slept' } : { phase: 'sleep' }),
  phases: {
    sleep: { run: async ({ state, wake }) => (wake ? { state: { ...state, done: true } } : { state, wait: { signals: ['finish'] } }) },
  },
};

/** Opens a resource, returns, and records whether `after` ran after the resource closed (RES-01). */
function orderedWorkflow(journal: Journal, db: () => TestEngine): Workflow<Flags & { waitOnce: boolean; failClose: boolean }, { waitOnce?: boolean; failClose?: boolean }> {
  return {
    name: 'test.ordered',
    initial: (input) => ({ done: false, waitOnce: input.waitOnce ?? false, failClose: input.failClose ?? false }),
    next: (s) => (s.done ? { end: 'completed' } : { phase: 'work' }),
    phases: {
      work: {
        async run(ctx) {
          const s = ctx.state;
          ctx.resources.defer(async () => {
            const [row] = await db().database.query<{ state: string; step: number }>('SELECT state, step FROM executions WHERE id = $1', [ctx.executionId]);
            journal.add(ctx.executionId, `resource closed (state ${row!.state}, step ${row!.step})`);
            if (s.failClose) throw new Error('the resource would not close');
          });
          journal.add(ctx.executionId, 'phase returned');
          if (s.waitOnce && ctx.wake === null) return { state: s, wait: { signals: ['go'] } };
          return { state: { ...s, done: true } };
        },
        async after({ executionId }) {
          journal.add(executionId, 'after');
        },
      },
    },
  };
}

/**
 * A phase with retries left that sends one outside call per attempt (each under a name of its own,
 * so a new attempt would be a new send) and opens a resource that will not close (RES-01).
 */
function closeFailsWithRetriesWorkflow(journal: Journal, outside: OutsideService): Workflow<Flags, null> {
  let attempts = 0;
  return {
    name: 'test.close-fails-with-retries',
    initial: () => ({ done: false }),
    next: (s) => (s.done ? { end: 'completed' } : { phase: 'send' }),
    phases: {
      send: {
        retries: 3,
        async run(ctx) {
          attempts += 1;
          ctx.resources.defer(() => {
            throw new Error('the connection would not close');
          });
          const answer = await ctx.calls.call(`send-${attempts}`, { safe: true }, (request) => outside.send(request, `attempt ${attempts}`));
          journal.add(ctx.executionId, `sent:${String(answer)}`);
          return { state: { done: true } };
        },
      },
    },
  };
}

describe('engine: cancel, children and resources', () => {
  let t: TestEngine;
  let b: EngineNode;
  const journal = new Journal();
  const outside = new OutsideService(() => 'sent');
  const closing = new OutsideService(() => 'sent');
  let release = deferred();

  const registerAll = (engine: Engine) => {
    engine.register(blockerWorkflow(journal, outside, () => release));
    engine.register(flakyWorkflow(journal));
    engine.register(parentWorkflow());
    engine.register(sleeperWorkflow);
    engine.register(orderedWorkflow(journal, () => t));
    engine.register(closeFailsWithRetriesWorkflow(journal, closing));
  };

  beforeAll(async () => {
    t = await startTestEngine();
    registerAll(t.engine);
    const nodeB = await t.node('node-b');
    b = nodeB.engine;
    registerAll(b);
    await t.engine.start();
    await b.start();
  });
  afterAll(async () => {
    release.resolve();
    await t.close();
  });
  beforeEach(() => {
    release = deferred();
    outside.requests.length = 0;
    t.faults.disarm();
  });

  const submit = (workflow: string, input: Json = null) => t.engine.submit({ workflow, input, scope: SERVICE });

  /** A parent waiting for its one attached child, a sleeper that waits for a `finish` signal. */
  async function parentWaitingOnSleeper(): Promise<{ parent: string; child: { id: string } }> {
    const { executionId: parent } = await submit('test.parent', { count: 1, attached: true, wait: 'children', child: 'test.sleeper' });
    const [child] = await eventually(async () => {
      const rows = await t.database.query<{ id: string }>('SELECT id FROM executions WHERE parent_id = $1', [parent]);
      return rows.length === 1 ? rows : null;
    }, 'the child to exist');
    await waitForState(t.engine, child!.id, ['waiting']);
    return { parent, child: child! };
  }

  it('[EXE-11] cancel closes the running phase’s gate (its AbortSignal) first, then its resources; a late call sends nothing', async () => {
    const { executionId } = await submit('test.blocker');
    await eventually(() => journal.of(executionId).includes('started'), 'the phase to start');

    // The request comes from another node: it reaches the node running the phase.
    expect(await b.cancel(executionId)).toEqual({ state: 'cancelling' });
    await eventually(() => journal.of(executionId).includes('aborted:cancel'), 'the phase to see its signal aborted');
    // The request does not claim the work stopped: the phase is still finishing, the state says so.
    expect((await t.engine.get(executionId))?.state).toBe('cancelling');
    expect(journal.of(executionId)).not.toContain('resource closed');

    release.resolve();
    expect(await waitForState(t.engine, executionId, FINAL)).toMatchObject({ state: 'cancelled', errorId: null });
    expect(journal.of(executionId)).toEqual(['started', 'aborted:cancel', 'late call refused:cancel', 'resource closed']);
    expect(outside.calls).toBe(0);
    const calls = await t.database.query('SELECT status FROM execution_calls WHERE execution_id = $1', [executionId]);
    expect(calls).toEqual([]);
    const events = await readAll(t.engine, executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'cancelled' });
    // The cancel signal was stored with its own cancel phase and consumed.
    const signals = await t.database.query('SELECT name, cancel_phase, consumed_at IS NOT NULL AS consumed FROM execution_signals WHERE execution_id = $1', [executionId]);
    expect(signals).toEqual([{ name: 'cancel', cancel_phase: 1, consumed: true }]);
  });

  it('[EXE-12] cancel of a final execution changes nothing', async () => {
    const { executionId } = await submit('test.blocker');
    await eventually(() => journal.of(executionId).includes('started'), 'the phase to start');
    release.resolve();
    expect(await waitForState(t.engine, executionId, FINAL)).toMatchObject({ state: 'completed' });
    const before = await executionRow(t.database, executionId);
    expect(await t.engine.cancel(executionId)).toEqual({ state: 'completed' });
    expect(await b.cancel(executionId)).toEqual({ state: 'completed' });
    const after = await executionRow(t.database, executionId);
    expect(after).toEqual(before);
    expect(await t.database.query('SELECT id FROM execution_signals WHERE execution_id = $1', [executionId])).toEqual([]);
    expect(await t.engine.result(executionId)).toBe('finished');
    // An execution that does not exist answers nothing.
    expect(await t.engine.cancel('01a00000-0000-7000-8000-000000000000')).toBeNull();
  });

  it('[EXE-12] cancel while a phase backs off between retries ends cancelled, and its attempts stop', async () => {
    const { executionId } = await submit('test.flaky');
    await eventually(() => journal.of(executionId).length >= 2, 'two attempts');
    expect(await t.engine.cancel(executionId)).toEqual({ state: 'cancelling' });
    expect(await waitForState(t.engine, executionId, FINAL)).toMatchObject({ state: 'cancelled' });
    await eventually(() => localRuns(t.engine) === 0 && localRuns(b) === 0, 'no node to run it any more');
    const attempts = journal.of(executionId).length;
    // Nine attempts (1 + 8 retries) would have ended it `failed`; it stopped before that.
    expect(attempts).toBeLessThan(9);
    expect(await t.engine.signal(executionId, 'anything', null)).toBe(false);
    expect(journal.of(executionId)).toHaveLength(attempts);
  });

  it('[EXE-13] cancel cascades to attached children; the parent ends cancelled after them, with their notices (EXE-14)', async () => {
    const { executionId: parent } = await submit('test.parent', { count: 2, attached: true, wait: 'children', child: 'test.blocker' });
    const children = await eventually(async () => {
      const rows = await t.database.query<{ id: string }>('SELECT id FROM executions WHERE parent_id = $1', [parent]);
      return rows.length === 2 && rows.every((r) => journal.of(r.id).includes('started')) ? rows.map((r) => r.id) : null;
    }, 'both children to run');
    await waitForState(t.engine, parent, ['waiting']);

    expect(await t.engine.cancel(parent)).toEqual({ state: 'cancelling' });
    for (const child of children) await eventually(() => journal.of(child).includes('aborted:cancel'), 'the child phase to be aborted');
    release.resolve();
    expect(await waitForState(t.engine, parent, FINAL, 20_000)).toMatchObject({ state: 'cancelled' });
    const rows = await t.database.query<{ id: string; state: string; ended_at: Date; attached: boolean }>(
      'SELECT id, state, ended_at, attached FROM executions WHERE id = ANY($1::uuid[])',
      [[parent, ...children]],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const child of children) {
      expect(byId.get(child)).toMatchObject({ state: 'cancelled', attached: true });
      expect(journal.of(child)).toContain('resource closed');
      expect(byId.get(parent)!.ended_at.getTime()).toBeGreaterThanOrEqual(byId.get(child)!.ended_at.getTime());
    }
    const notices = await t.database.query<{ child_id: string; state: string }>('SELECT child_id, state FROM execution_child_notices WHERE parent_id = $1 ORDER BY child_id', [parent]);
    expect(notices).toEqual([...children].sort().map((child_id) => ({ child_id, state: 'cancelled' })));
    expect(outside.calls).toBe(0);
  }, 90_000);

  it('[EXE-13] a detached child keeps running after its parent ends, and after its parent is cancelled', async () => {
    const { executionId: parent } = await submit('test.parent', { count: 1, attached: false, wait: 'none', child: 'test.sleeper' });
    expect(await waitForState(t.engine, parent, FINAL)).toMatchObject({ state: 'completed' });
    const [child] = await t.database.query<{ id: string }>('SELECT id FROM executions WHERE parent_id = $1', [parent]);
    // Source identity stays (parentId) while ownership does not (detached).
    expect(await waitForState(t.engine, child.id, ['waiting'])).toMatchObject({ parentId: parent });

    const { executionId: cancelled } = await submit('test.parent', { count: 1, attached: false, wait: 'signal', child: 'test.sleeper' });
    await waitForState(t.engine, cancelled, ['waiting']);
    const [child2] = await t.database.query<{ id: string }>('SELECT id FROM executions WHERE parent_id = $1', [cancelled]);
    await waitForState(t.engine, child2!.id, ['waiting']);
    await t.engine.cancel(cancelled);
    expect(await waitForState(t.engine, cancelled, FINAL)).toMatchObject({ state: 'cancelled' });
    expect((await t.engine.get(child2!.id))?.state).toBe('waiting');

    for (const id of [child.id, child2!.id]) {
      expect(await t.engine.signal(id, 'finish', null)).toBe(true);
      expect(await waitForState(t.engine, id, FINAL)).toMatchObject({ state: 'completed' });
      expect(await t.engine.result(id)).toBe('slept');
    }
  });

  it('[EXE-14] a child’s end and its notice commit together: the notice exists exactly when the child is final, and wakes the parent', async () => {
    const { parent, child } = await parentWaitingOnSleeper();
    await waitForState(t.engine, parent, ['waiting']);
    expect(await t.engine.signal(child.id, 'finish', null)).toBe(true);
    // Sample (child state, notice count) in single statements until the parent ends: never one without the other.
    const samples: Array<{ state: string; notices: number }> = [];
    await eventually(async () => {
      const [row] = await t.database.query<{ state: string; notices: number; parent: string }>(
        `SELECT c.state, (SELECT count(*)::int FROM execution_child_notices n WHERE n.child_id = c.id) AS notices, p.state AS parent
           FROM executions c JOIN executions p ON p.id = c.parent_id WHERE c.id = $1`,
        [child.id],
      );
      samples.push({ state: row!.state, notices: row!.notices });
      return FINAL.includes(row!.parent as (typeof FINAL)[number]);
    }, 'the parent to end', 40_000, 5);
    for (const s of samples) expect(s.notices).toBe(FINAL.includes(s.state as (typeof FINAL)[number]) ? 1 : 0);
    expect(await t.engine.get(parent)).toMatchObject({ state: 'completed' });
    expect(await t.engine.result(parent)).toEqual([{ childId: child.id, state: 'completed' }]);
    const notices = await t.database.query('SELECT state, consumed_at IS NOT NULL AS consumed FROM execution_child_notices WHERE parent_id = $1', [parent]);
    expect(notices).toEqual([{ state: 'completed', consumed: true }]);
  });

  it('[EXE-13] a cancel takes its children’s rows before its own, the order a child’s end locks them in: a child ending as its parent is cancelled meets no lock cycle', async () => {
    const { parent, child } = await parentWaitingOnSleeper();
    await waitForState(t.engine, parent, ['waiting']);
    // The child's end has locked its own row ...
    const end = new Client({ connectionString: t.database.url });
    await end.connect();
    try {
      await end.query('BEGIN');
      await end.query('SELECT 1 FROM executions WHERE id = $1 FOR UPDATE', [child.id]);
      await t.engine.cancel(parent);
      await eventually(async () => {
        const waits = await t.database.query(`SELECT 1 FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'`);
        return waits.length > 0;
      }, 'the parent’s cancel to wait for the child’s row');
      // ... and now wakes its parent: the cancel must not hold the parent's row while it waits for the
      // child's. NOWAIT fails at once (55P03) if it held it, the first half of a lock cycle.
      await end.query('SELECT 1 FROM executions WHERE id = $1 FOR NO KEY UPDATE NOWAIT', [parent]);
      await end.query('UPDATE executions SET updated_at = now() WHERE id = $1', [parent]);
      await end.query('ROLLBACK');
    } finally {
      await end.end();
    }
    expect(await waitForState(t.engine, child.id, FINAL)).toMatchObject({ state: 'cancelled' });
    expect(await waitForState(t.engine, parent, FINAL, 20_000)).toMatchObject({ state: 'cancelled' });
  });

  it('[EXE-14] when the notice cannot be written, the child’s end does not commit either', async () => {
    // The first notice write of this database fails (a sequence is not rolled back with its transaction).
    await t.database.query(`CREATE SEQUENCE test_notice_failures`);
    await t.database.query(`CREATE FUNCTION test_refuse_first_notice() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('test_notice_failures') = 1 THEN RAISE EXCEPTION 'notice write refused by the test'; END IF;
        RETURN NEW;
      END $$`);
    await t.database.query(`CREATE TRIGGER test_refuse_first_notice BEFORE INSERT ON execution_child_notices FOR EACH ROW EXECUTE FUNCTION test_refuse_first_notice()`);
    try {
      const { parent, child } = await parentWaitingOnSleeper();
      await t.engine.signal(child.id, 'finish', null);
      expect(await waitForState(t.engine, parent, FINAL)).toMatchObject({ state: 'completed' });
      // The `completed` end rolled back with the refused notice; the child then failed, with its notice.
      const view = await t.engine.get(child.id);
      expect(view).toMatchObject({ state: 'failed', category: 'internal' });
      const ended = (await readAll(t.engine, child.id)).filter((e) => e.type === 'execution.ended');
      expect(ended).toEqual([expect.objectContaining({ state: 'failed', errorId: view!.errorId })]);
      const notices = await t.database.query('SELECT state FROM execution_child_notices WHERE child_id = $1', [child.id]);
      expect(notices).toEqual([{ state: 'failed' }]);
      expect(await t.engine.result(parent)).toEqual([{ childId: child.id, state: 'failed' }]);
    } finally {
      await t.database.query('DROP TRIGGER test_refuse_first_notice ON execution_child_notices');
    }
  });

  it('[EXE-07][RES-01] a phase closes its resources before its checkpoint, before it waits, and before `after` runs', async () => {
    t.faults.arm('checkpoint.before-commit', { kind: 'call', run: () => undefined }, { when: () => true, times: 100 });
    const { executionId } = await submit('test.ordered', {});
    expect(await waitForState(t.engine, executionId, FINAL)).toMatchObject({ state: 'completed' });
    // The resource closed while step 0 was still the saved state: before the checkpoint of step 1.
    expect(journal.of(executionId)).toEqual(['phase returned', 'resource closed (state running, step 0)', 'after']);

    const waiting = await submit('test.ordered', { waitOnce: true });
    await waitForState(t.engine, waiting.executionId, ['waiting']);
    expect(journal.of(waiting.executionId)).toEqual(['phase returned', 'resource closed (state running, step 0)', 'after']);
    await t.engine.signal(waiting.executionId, 'go', null);
    expect(await waitForState(t.engine, waiting.executionId, FINAL)).toMatchObject({ state: 'completed' });
    expect(journal.of(waiting.executionId).slice(3)).toEqual(['phase returned', 'resource closed (state running, step 1)', 'after']);
  });

  it('[RES-01] a close failure keeps its full cause under a safe error ID; `after` does not run', async () => {
    const { executionId } = await submit('test.ordered', { failClose: true });
    const view = await waitForState(t.engine, executionId, FINAL);
    expect(view).toMatchObject({ state: 'failed', category: 'internal' });
    expect(view.errorId).toEqual(expect.any(String));
    // The release was retried with backoff before its failure was kept (ERR-04).
    expect(journal.of(executionId)).toEqual(['phase returned', ...Array.from({ length: RELEASE_ATTEMPTS }, () => 'resource closed (state running, step 0)')]);
    const [record] = await t.database.query<{ cause_id: string }>('SELECT cause_id FROM error_records WHERE id = $1', [view.errorId]);
    const [sealed] = await t.database.query<{ key_id: string; data: Buffer; purpose: string }>('SELECT key_id, data, purpose FROM sealed_records WHERE id = $1', [record!.cause_id]);
    const cause = t.sealer.open({ keyId: sealed!.key_id, data: sealed!.data }, associatedData(record!.cause_id, sealed!.purpose)).toString('utf8');
    expect(cause).toContain('the resource would not close');
    // The public view and the event carry only the category and the error ID.
    const events = await readAll(t.engine, executionId);
    expect(events.at(-1)).toEqual(expect.objectContaining({ type: 'execution.ended', state: 'failed', errorId: view.errorId, category: 'internal' }));
    expect(JSON.stringify(events)).not.toContain('would not close');
  });

  it('[RES-01] a close failure blocks any new send: a phase with retries left is not tried again, and its one send stays the only one', async () => {
    const { executionId } = await submit('test.close-fails-with-retries');
    const view = await waitForState(t.engine, executionId, FINAL);
    expect(view).toMatchObject({ state: 'failed', category: 'internal' });
    // The phase sent once, then its resource would not close: no later attempt sent anything.
    expect(closing.requests.map((r) => r.from)).toEqual(['attempt 1']);
    expect(journal.of(executionId)).toEqual(['sent:sent']);
    const calls = await t.database.query<{ status: string }>('SELECT status FROM execution_calls WHERE execution_id = $1', [executionId]);
    expect(calls).toEqual([{ status: 'succeeded' }]);
    // The failure the execution ends with is the close failure, kept whole under its error ID.
    const [record] = await t.database.query<{ cause_id: string }>('SELECT cause_id FROM error_records WHERE id = $1', [view.errorId]);
    const [sealed] = await t.database.query<{ key_id: string; data: Buffer; purpose: string }>('SELECT key_id, data, purpose FROM sealed_records WHERE id = $1', [record!.cause_id]);
    expect(t.sealer.open({ keyId: sealed!.key_id, data: sealed!.data }, associatedData(record!.cause_id, sealed!.purpose)).toString('utf8')).toContain('the connection would not close');
  });
});

describe('engine: a cancelled parent is woken by its children’s notices', () => {
  // A long lease: the recovery job of a claim fires only after 60 s, so only the notices can end the parent in time.
  let t: TestEngine;
  const journal = new Journal();
  const outside = new OutsideService(() => 'sent');
  const release = deferred();

  beforeAll(async () => {
    t = await startTestEngine({ leaseSeconds: 30 });
    t.engine.register(blockerWorkflow(journal, outside, () => release));
    t.engine.register(parentWorkflow());
    await t.engine.start();
  });
  afterAll(async () => {
    release.resolve();
    await t.close();
  });

  it('[EXE-14] the last child’s notice wakes its cancelling parent, which then ends cancelled (EXE-13)', async () => {
    const { executionId: parent } = await t.engine.submit({
      workflow: 'test.parent',
      input: { count: 2, attached: true, wait: 'children', child: 'test.blocker' },
      scope: SERVICE,
    });
    const children = await eventually(async () => {
      const rows = await t.database.query<{ id: string }>('SELECT id FROM executions WHERE parent_id = $1', [parent]);
      return rows.length === 2 && rows.every((r) => journal.of(r.id).includes('started')) ? rows.map((r) => r.id) : null;
    }, 'both children to run');
    await waitForState(t.engine, parent, ['waiting']);
    await t.engine.cancel(parent);
    for (const child of children) await eventually(() => journal.of(child).includes('aborted:cancel'), 'the child phase to be aborted');
    // The parent has cancelled its children and waits for them; every job due for it has run.
    await eventually(async () => {
      const [row] = await t.database.query<{ parked: boolean; pending: number }>(
        `SELECT e.state = 'cancelling' AND e.lease_until IS NULL AS parked,
                (SELECT count(*)::int FROM pgboss.job j WHERE j.name = 'execution-advance' AND j.data->>'executionId' = $1::text
                    AND j.state NOT IN ('completed', 'failed', 'cancelled') AND j.start_after < now() + interval '10 seconds') AS pending
           FROM executions e WHERE e.id = $1::uuid`,
        [parent],
      );
      return row!.parked && row!.pending === 0;
    }, 'the parent to wait for its children');

    release.resolve();
    for (const child of children) expect(await waitForState(t.engine, child, FINAL)).toMatchObject({ state: 'cancelled' });
    expect(await waitForState(t.engine, parent, FINAL, 20_000)).toMatchObject({ state: 'cancelled' });
    const notices = await t.database.query<{ child_id: string; state: string }>('SELECT child_id, state FROM execution_child_notices WHERE parent_id = $1 ORDER BY child_id', [parent]);
    expect(notices).toEqual([...children].sort().map((child_id) => ({ child_id, state: 'cancelled' })));
  }, 90_000);
});

import type { Json, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { eventually, forceTakeover, SERVICE, waitForState } from './helpers';

interface Spawn {
  [key: string]: Json;
  done: boolean;
  event: string;
}

/** One phase that emits an event and starts a child: all of it commits with the state, or none. */
const spawner: Workflow<Spawn, { event: string }> = {
  name: 'test.spawner',
  initial: ({ event }) => ({ done: false, event }),
  next: (s) => (s.done ? { end: 'completed', result: 'spawned' } : { phase: 'spawn' }),
  phases: {
    spawn: {
      async run(ctx) {
        ctx.emit(ctx.state.event, { secret: 'payload-in-clear-nowhere' });
        ctx.startChild({ workflow: 'test.leaf', input: null });
        return { state: { ...ctx.state, done: true } };
      },
    },
  },
};

const leaf: Workflow<{ [key: string]: Json; done: boolean }, null> = {
  name: 'test.leaf',
  initial: () => ({ done: false }),
  next: (s) => (s.done ? { end: 'completed' } : { phase: 'work' }),
  phases: { work: { run: async () => ({ state: { done: true } }) } },
};

interface Activity {
  [key: string]: Json;
  seen: string[];
}

/** Records the activity name of each run of its one phase; the first run blocks until released. */
let releaseFirst: () => void = () => undefined;
const named: Workflow<Activity, null> = {
  name: 'test.named',
  initial: () => ({ seen: [] }),
  next: (s) => (s.seen.length > 0 ? { end: 'completed', result: s.seen } : { phase: 'work' }),
  phases: {
    work: {
      async run(ctx) {
        if (ctx.generation === 1) await new Promise<void>((resolve) => (releaseFirst = resolve));
        return { state: { seen: [...ctx.state.seen, ctx.activity] } };
      },
    },
  },
};

describe('checkpoints', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
    for (const w of [spawner, leaf, named]) t.engine.register(w as unknown as Workflow);
    await t.engine.start();
  });
  afterAll(async () => {
    releaseFirst();
    await t.close();
  });

  it('[STC-01] state, events and outgoing commands (a child execution and its job) commit together', async () => {
    const { executionId } = await t.engine.submit({ workflow: spawner.name, input: { event: 'probe.spawned' }, scope: SERVICE });
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    const children = await t.database.query<{ id: string; state: string }>('SELECT id, state FROM executions WHERE parent_id = $1', [executionId]);
    expect(children).toHaveLength(1);
    await waitForState(t.engine, children[0]!.id, ['completed']);
    const events = await t.database.query<{ type: string }>('SELECT type FROM execution_events WHERE execution_id = $1 ORDER BY seq', [executionId]);
    expect(events.map((e) => e.type)).toEqual(['probe.spawned', 'execution.ended']);
  });

  it('[STC-01] when the checkpoint cannot commit, none of it is visible: no state change, no event, no child', async () => {
    // A trigger makes this one event's insert fail inside the checkpoint transaction.
    await t.database.query(`CREATE FUNCTION refuse_probe() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.type = 'probe.refused' THEN RAISE EXCEPTION 'refused by test'; END IF; RETURN NEW; END $$`);
    await t.database.query('CREATE TRIGGER refuse_probe BEFORE INSERT ON execution_events FOR EACH ROW EXECUTE FUNCTION refuse_probe()');
    try {
      const { executionId } = await t.engine.submit({ workflow: spawner.name, input: { event: 'probe.refused' }, scope: SERVICE });
      const ended = await waitForState(t.engine, executionId, ['completed', 'failed', 'cancelled', 'interrupted']);
      expect(ended.state).toBe('failed');
      expect(ended.step).toBe(0);
      const children = await t.database.query('SELECT id FROM executions WHERE parent_id = $1', [executionId]);
      expect(children).toEqual([]);
      const events = await t.database.query<{ type: string }>('SELECT type FROM execution_events WHERE execution_id = $1 ORDER BY seq', [executionId]);
      expect(events.map((e) => e.type)).toEqual(['execution.ended']);
    } finally {
      await t.database.query('DROP TRIGGER refuse_probe ON execution_events');
      await t.database.query('DROP FUNCTION refuse_probe()');
    }
  });

  it('[EXE-09] a phase runs as an activity named by its phase and generation; the engine stores it sealed', async () => {
    const { executionId } = await t.engine.submit({ workflow: named.name, input: null, scope: SERVICE });
    await eventually(async () => (await t.engine.get(executionId))?.state === 'running', 'running');
    const other = await t.node('node-b');
    other.engine.register(named as unknown as Workflow);
    await other.engine.start();
    await forceTakeover(t.database, other.engine, executionId, 1);
    expect(await other.engine.waitForEnd(executionId)).toBe('completed');
    expect(await other.engine.result(executionId)).toEqual(['work#2']);
    const [row] = await t.database.query<{ data: Buffer }>('SELECT data FROM executions WHERE id = $1', [executionId]);
    expect(row!.data.toString('latin1')).not.toContain('work#2');
    releaseFirst();
  });

  it('[EXE-05] the engine starts knowing no workflow: a feature\'s workflow exists only once that feature registers it, and only once', async () => {
    const bare = await t.node('node-e');
    await expect(bare.engine.submit({ workflow: 'chat.turn', input: null, scope: SERVICE })).rejects.toThrow('no workflow named "chat.turn" is registered');
    await expect(bare.engine.submit({ workflow: leaf.name, input: null, scope: SERVICE })).rejects.toThrow(`no workflow named "${leaf.name}" is registered`);
    bare.engine.register(leaf as unknown as Workflow);
    expect(() => bare.engine.register(leaf as unknown as Workflow)).toThrow(`workflow "${leaf.name}" is registered twice`);
    await bare.engine.start();
    const { executionId } = await bare.engine.submit({ workflow: leaf.name, input: null, scope: SERVICE, commandKey: 'registered-by-its-feature' });
    expect(await bare.engine.waitForEnd(executionId)).toBe('completed');
  });

  it('[EXE-05] a node that lacks a workflow hands its execution back instead of ending it', async () => {
    const registered = await t.node('node-c');
    const bare = await t.node('node-d');
    await bare.engine.start(); // node-d has no workflows registered
    const { executionId } = await t.engine.submit({ workflow: leaf.name, input: null, scope: SERVICE });
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    // An execution claimed by node-d (no workflow) is released, not interrupted; node-c finishes it.
    registered.engine.register(leaf as unknown as Workflow);
    await registered.engine.start();
    const second = await t.engine.submit({ workflow: leaf.name, input: null, scope: SERVICE, commandKey: 'leaf-2' });
    expect(await registered.engine.waitForEnd(second.executionId)).toBe('completed');
    await t.database.query(
      `UPDATE executions SET state = 'queued', step = 0, lease_until = NULL, ended_at = NULL WHERE id = $1`,
      [second.executionId],
    );
    await (bare.engine as unknown as { runner: { advance(id: string, fromJob: boolean): Promise<string> } }).runner.advance(second.executionId, true);
    const row = await t.database.query<{ state: string }>('SELECT state FROM executions WHERE id = $1', [second.executionId]);
    expect(row[0]!.state).not.toBe('interrupted');
    // A node that has the workflow picks it up when the handed-back job fires.
    const done = await waitForState(t.engine, second.executionId, ['completed', 'interrupted', 'failed']);
    expect(done.state).toBe('completed');
  });
});

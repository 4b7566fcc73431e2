import { InvalidInput } from '@openbot/domain';
import type { Json, ManualClock, Workflow } from '@openbot/engine';
import type { EngineNode } from '@openbot/engine/node';
import { startWorkflowKit, type WorkflowKit } from '../../support/workflow-kit';
import { eventually, SERVICE } from './helpers';

/** Completes with the input it was submitted with. */
const echo: Workflow<Json, Json> = {
  name: 'test.scheduled',
  initial: (input) => ({ input, done: false }),
  next: (state) => ((state as { done: boolean }).done ? { end: 'completed', result: (state as { input: Json }).input } : { phase: 'run' }),
  phases: { run: { run: async (ctx) => ({ state: { ...(ctx.state as Record<string, Json>), done: true } }) } },
};

const iso = (dates: ReadonlyArray<{ fireAt: Date }>): string[] => dates.map((d) => d.fireAt.toISOString());

describe('engine: recurring schedules', () => {
  let t: WorkflowKit;
  let a: EngineNode;
  let b: EngineNode;
  let clock: ManualClock;

  beforeAll(async () => {
    t = await startWorkflowKit({ startAt: new Date('2026-03-01T10:00:05Z'), schedulePollMs: 0, scheduleMisfireSeconds: 10 });
    clock = t.clock;
    a = t.engine;
    a.register(echo);
    b = (await t.node('node-b')).engine;
    b.register(echo);
    await a.start();
    await b.start();
  });
  afterAll(async () => {
    await t.close();
  });
  afterEach(async () => {
    // Each test moves the shared clock: another test's schedule must not fire in it.
    await t.database.query('DELETE FROM schedules');
  });

  it('[STC-01] two nodes ticking at once fire each due time exactly once, with its execution in the same transaction', async () => {
    clock.set(new Date('2026-03-01T10:00:05Z'));
    await a.schedules.upsert({ name: 'every-10s', cron: '*/10 * * * * *', workflow: 'test.scheduled', input: { n: 1 }, scope: SERVICE });
    const perTick: number[] = [];
    for (let i = 0; i < 6; i++) {
      clock.advance(10_000);
      const counts = await Promise.all([a.schedules.tick(), b.schedules.tick(), b.schedules.tick(), a.schedules.tick()]);
      perTick.push(counts.reduce((x, y) => x + y, 0));
    }
    // Ticks on one node share a run, so a node's count may appear twice; the fire rows are the truth.
    const fires = await a.schedules.fires('every-10s');
    expect(iso(fires)).toEqual(['10:00:10', '10:00:20', '10:00:30', '10:00:40', '10:00:50', '10:01:00'].map((s) => `2026-03-01T${s}.000Z`));
    expect(new Set(fires.map((f) => f.executionId)).size).toBe(6);
    expect(perTick.every((n) => n >= 1)).toBe(true);
    const [count] = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM executions WHERE workflow = 'test.scheduled' AND id = ANY($1::uuid[])`, [fires.map((f) => f.executionId)]);
    expect(count!.n).toBe(6);
    for (const fire of fires) expect(await a.waitForEnd(fire.executionId)).toBe('completed');
    expect(await a.result(fires[0]!.executionId)).toEqual({ n: 1 });
    // A node that acts on an old next fire time (a stale read, a restored row) finds the fire rows: nothing runs twice.
    await t.database.query(`UPDATE schedules SET next_fire_at = '2026-03-01T10:00:50Z' WHERE name = 'every-10s'`);
    expect(await Promise.all([a.schedules.tick(), b.schedules.tick()])).toEqual([0, 0]);
    expect(await a.schedules.fires('every-10s')).toHaveLength(6);
  });

  it('a restart after downtime applies each missed-run policy: skip drops, latest runs once, catch-up runs the window', async () => {
    clock.set(new Date('2026-03-02T10:00:30Z'));
    const old = await t.node('old-node');
    old.engine.register(echo);
    await old.engine.start();
    for (const [name, missed] of [
      ['skip', { policy: 'skip' }],
      ['latest', { policy: 'latest' }],
      ['catch-up', { policy: 'catch-up', windowSeconds: 300 }],
    ] as const) {
      await old.engine.schedules.upsert({ name: `missed-${name}`, cron: '* * * * *', workflow: 'test.scheduled', input: name, scope: SERVICE, missed });
    }
    clock.set(new Date('2026-03-02T10:01:00Z'));
    expect(await old.engine.schedules.tick()).toBe(3);
    await old.stop();

    // Down from 10:01 to 10:10:30: nine fire times passed; the latest (10:10) is 30 s late, past the 10 s threshold.
    clock.set(new Date('2026-03-02T10:10:30Z'));
    const restarted = await t.node('new-node');
    restarted.engine.register(echo);
    await restarted.engine.start();
    try {
      await restarted.engine.schedules.tick();
      const at = (time: string): string => `2026-03-02T${time}.000Z`;
      expect(iso(await restarted.engine.schedules.fires('missed-skip'))).toEqual([at('10:01:00')]);
      expect(iso(await restarted.engine.schedules.fires('missed-latest'))).toEqual([at('10:01:00'), at('10:10:00')]);
      expect(iso(await restarted.engine.schedules.fires('missed-catch-up'))).toEqual([at('10:01:00'), at('10:06:00'), at('10:07:00'), at('10:08:00'), at('10:09:00'), at('10:10:00')]);
      // A second tick at the same time fires nothing again; every schedule waits for 10:11.
      expect(await restarted.engine.schedules.tick()).toBe(0);
      for (const name of ['skip', 'latest', 'catch-up']) {
        expect((await restarted.engine.schedules.get(`missed-${name}`))?.nextFireAt?.toISOString()).toBe(at('10:11:00'));
      }
      // Back on time: each policy fires the next minute once.
      clock.set(new Date('2026-03-02T10:11:00Z'));
      expect(await restarted.engine.schedules.tick()).toBe(3);
    } finally {
      await restarted.stop();
    }
  });

  it('a tick asked for while another runs runs after it, on the clock as it is then: a schedule made due meanwhile fires', async () => {
    clock.set(new Date('2026-03-06T10:00:00.500Z'));
    await a.schedules.upsert({ name: 'hourly', cron: '0 * * * *', workflow: 'test.scheduled', input: null, scope: SERVICE });
    // The first tick reads the clock at once, before it moves: nothing is due for it.
    const early = a.schedules.tick();
    clock.set(new Date('2026-03-06T11:00:01Z'));
    const late = a.schedules.tick();
    expect(await early).toBe(0);
    expect(await late).toBe(1);
    expect(iso(await a.schedules.fires('hourly'))).toEqual(['2026-03-06T11:00:00.000Z']);
  });

  it('a slow tick loses no fire time within the misfire threshold, whatever the policy', async () => {
    clock.set(new Date('2026-03-05T10:00:00.500Z'));
    await a.schedules.upsert({ name: 'per-second', cron: '* * * * * *', workflow: 'test.scheduled', input: null, scope: SERVICE });
    // Four seconds late (threshold 10 s): 10:00:01 … 10:00:04 all run, once each.
    clock.set(new Date('2026-03-05T10:00:04.200Z'));
    expect(await a.schedules.tick()).toBe(4);
    expect(iso(await a.schedules.fires('per-second'))).toEqual(['01', '02', '03', '04'].map((s) => `2026-03-05T10:00:${s}.000Z`));
  });

  it('fire times follow the IANA time zone across DST changes: a skipped local time runs once after the gap, a repeated one once', async () => {
    const walk = async (name: string, cron: string, timeZone: string, from: string, count: number): Promise<string[]> => {
      clock.set(new Date(from));
      await a.schedules.upsert({ name, cron, timeZone, workflow: 'test.scheduled', input: null, scope: SERVICE });
      for (let i = 0; i < count; i++) {
        const next = (await a.schedules.get(name))!.nextFireAt!;
        clock.set(next);
        expect(await a.schedules.tick()).toBe(1);
        // An hour later (the repeated hour on a fall-back night) nothing fires again.
        clock.set(next.getTime() + 3_600_000);
        expect(await a.schedules.tick()).toBe(0);
      }
      const fires = iso(await a.schedules.fires(name));
      await a.schedules.remove(name);
      return fires;
    };
    // Berlin springs forward at 02:00 on 29 March: 02:30 does not exist that night and runs at 03:00 CEST.
    expect(await walk('berlin-spring', '30 2 * * *', 'Europe/Berlin', '2026-03-28T00:00:00Z', 3)).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
    // Berlin falls back at 03:00 on 25 October: 02:30 happens twice on the wall clock, the schedule runs once.
    expect(await walk('berlin-autumn', '30 2 * * *', 'Europe/Berlin', '2026-10-24T00:00:00Z', 3)).toEqual([
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
    // 09:00 in New York stays 09:00 local when the offset moves from -5 to -4 (8 March).
    expect(await walk('new-york', '0 9 * * *', 'America/New_York', '2026-03-07T00:00:00Z', 2)).toEqual(['2026-03-07T14:00:00.000Z', '2026-03-08T13:00:00.000Z']);
  });

  it('refuses an expression or a time zone that does not parse, naming the field', async () => {
    const spec = { name: 'bad', workflow: 'test.scheduled', input: null, scope: SERVICE };
    await expect(a.schedules.upsert({ ...spec, cron: 'every minute' })).rejects.toMatchObject({ issues: [{ path: 'cron' }] });
    await expect(a.schedules.upsert({ ...spec, cron: '* * * * *', timeZone: 'Mars/Base' })).rejects.toBeInstanceOf(InvalidInput);
    expect(await a.schedules.get('bad')).toBeNull();
  });

  it('an upsert with the same expression keeps a due fire time; a changed one recomputes it', async () => {
    clock.set(new Date('2026-03-03T10:00:30Z'));
    await a.schedules.upsert({ name: 'moving', cron: '* * * * *', workflow: 'test.scheduled', input: 1, scope: SERVICE });
    clock.set(new Date('2026-03-03T10:01:05Z'));
    await a.schedules.upsert({ name: 'moving', cron: '* * * * *', workflow: 'test.scheduled', input: 2, scope: SERVICE });
    expect((await a.schedules.get('moving'))?.nextFireAt?.toISOString()).toBe('2026-03-03T10:01:00.000Z');
    expect(await a.schedules.tick()).toBe(1);
    const [fire] = await a.schedules.fires('moving');
    expect(await a.waitForEnd(fire!.executionId)).toBe('completed');
    expect(await a.result(fire!.executionId)).toBe(2);
    await a.schedules.upsert({ name: 'moving', cron: '0 12 * * *', workflow: 'test.scheduled', input: 2, scope: SERVICE });
    expect((await a.schedules.get('moving'))?.nextFireAt?.toISOString()).toBe('2026-03-03T12:00:00.000Z');
    expect(await a.schedules.remove('moving')).toBe(true);
  });

  it('a node ticks by itself: its poller fires a due schedule without a call to tick()', async () => {
    const polling = await t.node('node-poll', { schedulePollMs: 50 });
    polling.engine.register(echo);
    await polling.engine.start();
    clock.set(new Date('2026-03-04T10:00:30Z'));
    await polling.engine.schedules.upsert({ name: 'polled', cron: '* * * * *', workflow: 'test.scheduled', input: null, scope: SERVICE });
    clock.set(new Date('2026-03-04T10:01:00Z'));
    const fires = await eventually(async () => ((await polling.engine.schedules.fires('polled')).length === 1 ? true : null), 'the poller to fire');
    expect(fires).toBe(true);
    await polling.engine.schedules.remove('polled');
  });
});

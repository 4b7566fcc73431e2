import { newId } from '@openbot/domain';
import { Pool } from 'pg';
import { EventWriteBatcher, TICK_LANES } from '../../../libs/engine/src/logs/event-write-batcher';
import { appendEvents } from '../../../libs/engine/src/sql/events';
import type { PendingEvent } from '../../../libs/engine/src/base/store';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';

/**
 * Group commit of events published while phases run: several executions' events in one
 * statement, each execution's sequence numbers consecutive and fenced by its own generation.
 */
describe('event write batcher', () => {
  let db: TestDatabase;
  let pool: Pool;
  let batcher: EventWriteBatcher;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 4 });
    // An idle client the database drop terminates during teardown must not fail whichever spec runs then.
    pool.on('error', () => undefined);
    batcher = new EventWriteBatcher(pool);
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  async function execution(options: { generation?: number; state?: string; lastSeq?: number } = {}): Promise<string> {
    const id = newId();
    await db.query(
      `INSERT INTO executions (id, workflow, scope_kind, scope_id, state, generation, key_id, data)
       VALUES ($1, 'test.events', 'service', $2, $3, $4, 'k', '\\x00')`,
      [id, newId(), options.state ?? 'running', options.generation ?? 1],
    );
    if ((options.lastSeq ?? 0) > 0) await db.query('INSERT INTO execution_event_seqs (execution_id, last_seq) VALUES ($1, $2)', [id, options.lastSeq]);
    return id;
  }

  const events = (n: number, type: string | null = 'text.delta'): PendingEvent[] =>
    Array.from({ length: n }, (_, i) => ({ type: type as string, step: 1, attempt: 1, keyId: null, data: Buffer.from([i]) }));

  it('[EVT-01] events of many executions written together keep consecutive sequence numbers per execution; a replaced or ended owner writes nothing', async () => {
    const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => execution({ lastSeq: i })));
    const replaced = await execution({ generation: 2 });
    const ended = await execution({ state: 'completed' });
    const results = await Promise.all([
      ...ids.map((id, i) => batcher.write(id, 1, events(i + 1))),
      batcher.write(replaced, 1, events(2)),
      batcher.write(ended, 1, events(2)),
    ]);
    ids.forEach((_, i) => expect(results[i]?.lastSeq).toBe(i + i + 1));
    expect(results.slice(8)).toEqual([null, null]);
    for (const [i, id] of ids.entries()) {
      const rows = await db.query<{ seq: number }>('SELECT seq FROM execution_events WHERE execution_id = $1 ORDER BY seq', [id]);
      expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: i + 1 }, (_, k) => i + k + 1));
    }
    const stray = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM execution_events WHERE execution_id = ANY($1::uuid[])', [[replaced, ended]]);
    expect(stray[0]!.n).toBe(0);
  });

  it('[EVT-01][CALL-05] a phase publish fences by sharing the execution row lock, not by rewriting the row: the row keeps its version, numbers continue the ones a locked writer handed out, and a publish of the old generation that waited behind a take-over writes nothing', async () => {
    const id = await execution();
    const version = async () => (await db.query<{ xmin: string }>('SELECT xmin::text AS xmin FROM executions WHERE id = $1', [id]))[0]!.xmin;
    const before = await version();
    expect((await batcher.write(id, 1, events(3)))?.lastSeq).toBe(3);
    expect(await version()).toBe(before);
    // A writer under the row lock (a checkpoint's or an end's events) takes the next numbers.
    const locked = await pool.connect();
    try {
      await locked.query('BEGIN');
      await locked.query('SELECT 1 FROM executions WHERE id = $1 FOR UPDATE', [id]);
      expect(await appendEvents(locked, id, events(2, 'execution.step'))).toBe(5);
      await locked.query('COMMIT');
      // A take-over holds the row while a publish of the old generation waits; after it commits the publish writes nothing.
      await locked.query('BEGIN');
      await locked.query('UPDATE executions SET generation = 2 WHERE id = $1', [id]);
      const waiting = batcher.write(id, 1, events(1));
      await locked.query('COMMIT');
      expect(await waiting).toBeNull();
    } finally {
      locked.release();
    }
    expect((await batcher.write(id, 2, events(2)))?.lastSeq).toBe(7);
    const seqs = await db.query<{ seq: number }>('SELECT seq FROM execution_events WHERE execution_id = $1 ORDER BY seq', [id]);
    expect(seqs.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('[CALL-07] an execution whose events the database refuses fails alone; the others written with it are stored', async () => {
    const good = await Promise.all(Array.from({ length: 4 }, () => execution()));
    const bad = await execution();
    const outcomes = await Promise.allSettled([...good.map((id) => batcher.write(id, 1, events(3))), batcher.write(bad, 1, events(1, null))]);
    expect(outcomes.slice(0, 4).map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(outcomes[4]).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ code: '23502' }) });
    const counts = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM execution_events WHERE execution_id = ANY($1::uuid[])', [good]);
    expect(counts[0]!.n).toBe(12);
  });

  it('[EVT-02] with a note, each statement sends the other nodes\' notification itself, naming exactly the executions it stored; a fenced-off one is not named', async () => {
    const listener = await pool.connect();
    const heard: string[] = [];
    listener.on('notification', (message) => heard.push(message.payload ?? ''));
    const noted = new EventWriteBatcher(pool, undefined, { channel: 'batcher_probe', origin: 'node-x' });
    try {
      await listener.query('LISTEN batcher_probe');
      const ids = await Promise.all(Array.from({ length: 3 }, () => execution()));
      const replaced = await execution({ generation: 2 });
      // The first write goes alone; the others, arriving meanwhile, go in one batch statement.
      const results = await Promise.all([...ids.map((id) => noted.write(id, 1, events(2))), noted.write(replaced, 1, events(1))]);
      expect(results.slice(0, 3).map((r) => r?.announced)).toEqual([true, true, true]);
      expect(results[3]).toBeNull();
      const named = async () => {
        for (let i = 0; i < 100 && heard.flatMap((p) => p.split('|')[1]!.split(',')).length < 3; i++) await new Promise((r) => setTimeout(r, 20));
        return heard.flatMap((p) => p.split('|')[1]!.split(','));
      };
      expect((await named()).sort()).toEqual([...ids].sort());
      expect(heard.every((p) => p.startsWith('node-x|'))).toBe(true);
      // Without a note nothing is sent.
      heard.length = 0;
      const quiet = await batcher.write(ids[0]!, 1, events(1));
      expect(quiet?.announced).toBe(false);
      await new Promise((r) => setTimeout(r, 200));
      expect(heard).toEqual([]);
    } finally {
      await listener.query('UNLISTEN batcher_probe').catch(() => undefined);
      listener.release();
    }
  });

  it('publish ticks come in lanes: lane k ticks k quarters of a window after lane 0, each lane on one timer', async () => {
    const windowMs = 2_000;
    const quarter = windowMs / TICK_LANES;
    const now = performance.now();
    expect(batcher.tick(windowMs, 1)).toBe(batcher.tick(windowMs, 1));
    // When each lane's next tick is due: the first time after now that is k quarters past a multiple of the window.
    const due = Array.from({ length: TICK_LANES }, (_, lane) => now + windowMs - ((((now - lane * quarter) % windowMs) + windowMs) % windowMs));
    const fired: Array<{ lane: number; at: number }> = [];
    await Promise.all(Array.from({ length: TICK_LANES }, (_, lane) => batcher.tick(windowMs, lane).then(() => fired.push({ lane, at: performance.now() }))));
    // Each lane fires in the order its tick is due, never before it (a timer may fire up to 1 ms
    // early: Node truncates delays). A loaded host may fire them late, but still in that order.
    const byDue = [...due.keys()].sort((a, b) => due[a]! - due[b]!);
    expect(fired.map((f) => f.lane)).toEqual(byDue);
    for (const { lane, at } of fired) expect(at).toBeGreaterThanOrEqual(due[lane]! - 2);
  });
});

import { newId } from '@openbot/domain';
import { Pool } from 'pg';
import { CheckpointBatcher } from '../../../libs/engine/src/logs/checkpoint-batcher';
import { checkpoint } from '../../../libs/engine/src/sql/executions';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';

/**
 * Group commit of plain checkpoints: many executions' checkpoints in one statement, each row
 * still fenced by its generation and step (EXE-03/04), and a refused row failing alone.
 */
describe('checkpoint batcher', () => {
  let db: TestDatabase;
  let pool: Pool;
  let batcher: CheckpointBatcher;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 4 });
    // An idle client the database drop terminates during teardown must not fail whichever spec runs then.
    pool.on('error', () => undefined);
    batcher = new CheckpointBatcher(pool);
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  async function execution(generation = 1, step = 0): Promise<string> {
    const id = newId();
    await db.query(
      `INSERT INTO executions (id, workflow, scope_kind, scope_id, state, step, generation, key_id, data)
       VALUES ($1, 'test.batch', 'service', $2, 'running', $3, $4, 'k', '\\x00')`,
      [id, newId(), step, generation],
    );
    return id;
  }

  const plain = (id: string, generation: number, step: number, keyId: string | null = 'k1') => ({
    id,
    generation,
    keyId: keyId as string,
    data: Buffer.from([step]),
    step,
    state: 'running' as const,
  });

  it('[EXE-04] checkpoints saved together each keep their own fence: only the owning generation and the next step are written', async () => {
    const ids = await Promise.all(Array.from({ length: 12 }, () => execution()));
    const stale = await execution(2);
    const ahead = await execution(1, 3);
    const results = await Promise.all([
      ...ids.map((id) => batcher.save(plain(id, 1, 1))),
      batcher.save(plain(stale, 1, 1)),
      batcher.save(plain(ahead, 1, 1)),
    ]);
    expect(results.slice(0, 12).every((r) => r !== null && r.state === 'running')).toBe(true);
    expect(results.slice(12)).toEqual([null, null]);
    const rows = await db.query<{ id: string; step: number; key_id: string }>('SELECT id, step, key_id FROM executions WHERE id = ANY($1::uuid[])', [[...ids, stale, ahead]]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of ids) expect(byId.get(id)).toMatchObject({ step: 1, key_id: 'k1' });
    expect(byId.get(stale)).toMatchObject({ step: 0, key_id: 'k' });
    expect(byId.get(ahead)).toMatchObject({ step: 3, key_id: 'k' });
    // The same step again (a retry after a lost reply) writes nothing twice.
    expect(await batcher.save(plain(ids[0]!, 1, 1))).toBeNull();
  });

  it('[CALL-07] a row the database refuses fails alone; the checkpoints saved with it are written', async () => {
    const good = await Promise.all(Array.from({ length: 5 }, () => execution()));
    const bad = await execution();
    const outcomes = await Promise.allSettled([...good.map((id) => batcher.save(plain(id, 1, 1))), batcher.save(plain(bad, 1, 1, null))]);
    expect(outcomes.slice(0, 5).map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(outcomes[5]).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ code: '23502' }) });
    const steps = await db.query<{ step: number }>('SELECT step FROM executions WHERE id = ANY($1::uuid[]) ORDER BY id', [good]);
    expect(steps.map((r) => r.step)).toEqual([1, 1, 1, 1, 1]);
  });

  it('checkpoints of callers answered together, and of callers that arrive side by side, share one statement (gathering, decision 059)', async () => {
    const ids = await Promise.all(Array.from({ length: 6 }, () => execution()));
    // The real pool, with its statements counted.
    let statements = 0;
    const counting = { query: (...args: Parameters<Pool['query']>) => ((statements += 1), pool.query(...args)) } as unknown as Pool;
    const gathering = new CheckpointBatcher(counting);
    // Six executions, three phases each: every phase's checkpoint waits for the one before it.
    const runs = ids.map(async (id) => {
      for (let step = 1; step <= 3; step += 1) expect(await gathering.save(plain(id, 1, step))).toMatchObject({ state: 'running' });
    });
    await Promise.all(runs);
    // Without gathering the first checkpoint goes out alone and the six split into cohorts.
    expect(statements).toBe(3);
    const rows = await db.query<{ step: number }>('SELECT step FROM executions WHERE id = ANY($1::uuid[])', [ids]);
    expect(rows.map((r) => r.step)).toEqual([3, 3, 3, 3, 3, 3]);
  });

  it('every form of checkpoint is a heap-only update: it changes no indexed column, so no index entry is written, and leaves the lease to the renewal', async () => {
    const ids = await Promise.all(Array.from({ length: 4 }, () => execution()));
    await db.query(`UPDATE executions SET owner_node = 'n', lease_until = now() + interval '15 seconds' WHERE id = ANY($1::uuid[])`, [ids]);
    const before = await db.query<{ id: string; lease_until: Date; updated_at: Date }>('SELECT id, lease_until, updated_at FROM executions WHERE id = ANY($1::uuid[])', [ids]);
    // One session, one transaction: PostgreSQL counts this transaction's own heap-only updates.
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const inTransaction = new CheckpointBatcher(client as unknown as Pool);
      const batched = await Promise.all([inTransaction.save(plain(ids[0]!, 1, 1)), inTransaction.save(plain(ids[1]!, 1, 1)), inTransaction.save(plain(ids[2]!, 1, 1))]);
      expect(batched.every((r) => r?.state === 'running')).toBe(true);
      expect(await checkpoint(client, { ...plain(ids[3]!, 1, 1), events: [] })).toMatchObject({ state: 'running' });
      const event = { type: 'phase.note', step: 2, attempt: 1, keyId: 'k1', data: Buffer.from([2]) };
      expect(await checkpoint(client, { ...plain(ids[3]!, 1, 2), events: [event] })).toMatchObject({ state: 'running' });
      const [counts] = (
        await client.query<{ updated: number; hot: number }>(
          `SELECT pg_stat_get_xact_tuples_updated('executions'::regclass)::int AS updated, pg_stat_get_xact_tuples_hot_updated('executions'::regclass)::int AS hot`,
        )
      ).rows;
      // Five checkpoints: at least five row versions, every one of them heap-only.
      expect(counts!.updated).toBeGreaterThanOrEqual(5);
      expect(counts!.hot).toBe(counts!.updated);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    const after = await db.query<{ id: string; lease_until: Date; updated_at: Date }>('SELECT id, lease_until, updated_at FROM executions WHERE id = ANY($1::uuid[])', [ids]);
    expect(after.map((r) => [r.id, r.lease_until.getTime(), r.updated_at.getTime()]).sort()).toEqual(before.map((r) => [r.id, r.lease_until.getTime(), r.updated_at.getTime()]).sort());
  });
});

import { newId } from '@openbot/domain';
import { Pool } from 'pg';
import { renewLeases } from '../../../libs/engine/src/sql/executions';
import { retryStorage } from '../../../libs/engine/src/base/storage-retry';
import { withTransaction } from '../../../libs/engine/src/base/tx';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { eventually } from './helpers';

/**
 * Statements that lock many execution rows take them in ID order. A batched phase publish shares
 * them in that order, so a lease renewal in any other order could deadlock with it, and
 * PostgreSQL needs `deadlock_timeout` (1 s) to break that, stalling every stream in the batch.
 */
describe('execution row lock order', () => {
  let db: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 4 });
    pool.on('error', () => undefined);
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  async function owned(id: string): Promise<string> {
    await db.query(
      `INSERT INTO executions (id, workflow, scope_kind, scope_id, state, generation, key_id, data, owner_node, lease_until)
       VALUES ($1, 'test.locks', 'service', $2, 'running', 1, 'k', '\\x00', 'node-l', now() + interval '15 seconds')`,
      [id, newId()],
    );
    return id;
  }

  /** Until a renewal waits for a row lock another transaction holds (a positive event, not a pause). */
  async function renewalWaits(): Promise<void> {
    await eventually(async () => {
      const waits = await db.query(`SELECT 1 FROM pg_locks WHERE NOT granted AND locktype IN ('transactionid', 'tuple')`);
      return waits.length > 0;
    }, 'the renewal to wait for a held row');
  }

  it('a lease renewal listing its executions in any order waits behind a publish that shares them in ID order, and neither fails', async () => {
    const [low, high] = [newId(), newId()].sort();
    // Stored higher first: a scan meets them in the order the renewal lists them, not by ID.
    await owned(high!);
    await owned(low!);
    const publish = await pool.connect();
    try {
      // The publish shares the lower row first, as its statement does.
      await publish.query('BEGIN');
      await publish.query('SELECT 1 FROM executions WHERE id = $1 FOR SHARE', [low]);
      // The renewal lists the higher row first (the order this node started them in).
      const renewal = renewLeases(pool, 'node-l', [{ id: high!, generation: 1 }, { id: low!, generation: 1 }], 15);
      await renewalWaits();
      // The publish now shares the higher row: it must not find it held by the waiting renewal.
      // NOWAIT fails at once (55P03) if the renewal held it, the first half of a lock cycle.
      await publish.query('SELECT 1 FROM executions WHERE id = $1 FOR SHARE NOWAIT', [high]);
      await publish.query('COMMIT');
      expect([...(await renewal)].sort()).toEqual([low, high]);
    } finally {
      publish.release();
    }
  });

  it('[EXE-08] a lease renewal that waited for rows which ended or parked meanwhile leaves them without a lease', async () => {
    const ended = await owned(newId());
    const parked = await owned(newId());
    const other = await pool.connect();
    try {
      // An end and a park (pause) hold the rows while the renewal of both runs comes in.
      await other.query('BEGIN');
      await other.query(`UPDATE executions SET state = 'completed', lease_until = NULL, ended_at = now() WHERE id = $1`, [ended]);
      await other.query(`UPDATE executions SET state = 'waiting', paused = true, lease_until = NULL WHERE id = $1`, [parked]);
      const renewal = renewLeases(pool, 'node-l', [{ id: ended, generation: 1 }, { id: parked, generation: 1 }], 15);
      await renewalWaits();
      await other.query('COMMIT');
      expect([...(await renewal)]).toEqual([]);
    } finally {
      other.release();
    }
    const rows = await db.query<{ state: string; lease_until: Date | null }>('SELECT state, lease_until FROM executions WHERE id = ANY($1::uuid[]) ORDER BY state', [[ended, parked]]);
    expect(rows).toEqual([
      { state: 'completed', lease_until: null },
      { state: 'waiting', lease_until: null },
    ]);
  });

  it('a lease renewal never closes a lock cycle with an end that locks a child and then wakes its parent: neither waits for deadlock detection', async () => {
    // The parent was created first, so its ID is the lower: the renewal meets it first.
    const [parent, child] = [newId(), newId()].sort();
    await owned(parent!);
    await owned(child!);
    const end = await pool.connect();
    try {
      // The child's end holds its own row ...
        await end.query('BEGIN');
      await end.query(`UPDATE executions SET state = 'cancelled' WHERE id = $1`, [child]);
      const renewal = renewLeases(pool, 'node-l', [{ id: parent!, generation: 1 }, { id: child!, generation: 1 }], 15);
      await renewalWaits();
      // ... then wakes its parent: the renewal must not be holding the parent while it waits for the
      // child. NOWAIT fails at once (55P03) if it held the parent, the first half of a lock cycle.
      await end.query('SELECT 1 FROM executions WHERE id = $1 FOR NO KEY UPDATE NOWAIT', [parent]);
      await end.query(`UPDATE executions SET updated_at = now() WHERE id = $1 AND state = 'running'`, [parent]);
      await end.query('COMMIT');
      // The child ended meanwhile: only the parent's lease is renewed.
      expect([...(await renewal)]).toEqual([parent]);
    } finally {
      end.release();
    }
  });

  it('[CALL-06] a transaction PostgreSQL rolls back to break a deadlock is retried whole at its boundary: both sides of the cycle commit once', async () => {
    const [a, b] = [newId(), newId()].sort();
    await owned(a!);
    await owned(b!);
    let tries = 0;
    let firstHeld!: () => void;
    const bothHold = new Promise<void>((resolve) => (firstHeld = resolve));
    // Two transactions lock the two rows in opposite orders, each waiting until the other holds its first row.
    const side = (first: string, second: string, held: () => Promise<void>) =>
      retryStorage(
        () =>
          withTransaction(pool, async (tx) => {
            tries += 1;
            await tx.query('UPDATE executions SET step = step + 1 WHERE id = $1', [first]);
            await held();
            await tx.query('UPDATE executions SET step = step + 1 WHERE id = $1', [second]);
          }),
        undefined,
        10_000,
      );
    let waiting = 0;
    const meet = async (): Promise<void> => {
      waiting += 1;
      if (waiting === 2) firstHeld();
      await bothHold;
    };
    await Promise.all([side(a!, b!, meet), side(b!, a!, meet)]);
    // One side was chosen as the deadlock victim and ran again; each row counts both commits exactly once.
    expect(tries).toBe(3);
    expect(await db.query('SELECT step FROM executions WHERE id = ANY($1::uuid[]) ORDER BY id', [[a, b]])).toEqual([{ step: 2 }, { step: 2 }]);
  });
});

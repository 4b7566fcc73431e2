import { FINAL_STATES } from '@openbot/domain';
import { executionCountsByState } from '@openbot/engine/node';
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { executionsByState } from '../../../libs/engine/src/sql/metrics';
import { pruneBatch } from '../../../libs/features/src/retention/prune-batches';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';

const DEFAULTS = { textDeltaDays: 30, callPayloadDays: 30, schedule: '* * * * *', maxDays: 3650 };

const DAY = 24 * 3600 * 1000;

/**
 * The retention batches and the metrics gauge on real PostgreSQL (docs/decisions/041 and 034):
 * batches take the oldest due executions first, at most the batch size, by each organization's
 * setting; and both read through their partial indexes, not the executions table.
 */
describe('retention batches and the indexes behind them', () => {
  let db: TestDatabase;
  let pool: Pool;
  const now = new Date('2030-01-01T00:00:00Z');

  async function ended(daysAgo: number, organizationId: string | null): Promise<string> {
    const id = randomUUID();
    await db.query(
      `INSERT INTO executions (id, workflow, organization_id, scope_kind, scope_id, state, key_id, data, ended_at)
       VALUES ($1, 'test.w', $2, 'service', $3, 'completed', 'k', '\\x00', $4)`,
      [id, organizationId, randomUUID(), new Date(now.getTime() - daysAgo * DAY)],
    );
    for (let seq = 1; seq <= 3; seq++) {
      await db.query(`INSERT INTO execution_events (execution_id, seq, type) VALUES ($1, $2, $3)`, [id, seq, seq === 3 ? 'execution.ended' : 'text.delta']);
    }
    return id;
  }

  const deltasOf = async (id: string) => (await db.query(`SELECT seq FROM execution_events WHERE execution_id = $1 AND type = 'text.delta'`, [id])).length;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('prunes the oldest due executions first, one batch at a time, each by its organization’s days or the default', async () => {
    const org = randomUUID();
    await db.query(`INSERT INTO organizations (id, name) VALUES ($1, 'Keeps 60 days')`, [org]);
    await db.query(`INSERT INTO organization_retention (organization_id, text_delta_days) VALUES ($1, 60)`, [org]);
    const oldest = await ended(40, null);
    const older = await ended(35, null);
    const kept = await ended(45, org); // its organization keeps 60 days
    const recent = await ended(10, null);

    expect(await pruneBatch(pool, 'deltas', now, DEFAULTS, 1)).toEqual({ executions: 1, rows: 2 });
    expect([await deltasOf(oldest), await deltasOf(older)]).toEqual([0, 2]);
    expect(await pruneBatch(pool, 'deltas', now, DEFAULTS, 1)).toEqual({ executions: 1, rows: 2 });
    expect(await pruneBatch(pool, 'deltas', now, DEFAULTS, 1)).toEqual({ executions: 0, rows: 0 });
    expect([await deltasOf(older), await deltasOf(kept), await deltasOf(recent)]).toEqual([0, 2, 2]);
    // The final event stays; the mark says when.
    expect(await db.query(`SELECT type FROM execution_events WHERE execution_id = $1`, [oldest])).toEqual([{ type: 'execution.ended' }]);
    expect(await db.query(`SELECT deltas_pruned_at FROM executions WHERE id = $1`, [oldest])).toEqual([{ deltas_pruned_at: now }]);
  });

  it('the next batch is found through the partial index of unpruned ended executions, not by reading the table', async () => {
    const plan = await explain(`SELECT e.id FROM executions e WHERE e.ended_at IS NOT NULL AND e.deltas_pruned_at IS NULL AND e.ended_at <= now() ORDER BY e.ended_at LIMIT 200`);
    expect(plan).toContain('executions_deltas_prunable_idx');
    const payloads = await explain(`SELECT e.id FROM executions e WHERE e.ended_at IS NOT NULL AND e.payloads_pruned_at IS NULL AND e.ended_at <= now() ORDER BY e.ended_at LIMIT 200`);
    expect(payloads).toContain('executions_payloads_prunable_idx');
  });

  it('the executions-by-state gauge reads executions_active_idx, not the table, and its state list is the final states', async () => {
    await db.query(`INSERT INTO executions (id, workflow, scope_kind, scope_id, state, key_id, data) VALUES ($1, 'test.w', 'service', $2, 'running', 'k', '\\x00')`, [randomUUID(), randomUUID()]);
    expect(await executionCountsByState(pool)).toEqual([{ workflow: 'test.w', state: 'running', count: 1 }]);
    // The gauge's own statement: the planner proves the partial index applies (a parameter would not let it).
    const plan = await explain(executionsByState.text);
    expect(plan).toMatch(/Index (Only )?Scan (using|on) executions_active_idx/);
    expect(plan).not.toContain('Seq Scan');
    const listed = /NOT IN \(([^)]*)\)/.exec(executionsByState.text)![1]!.split(',').map((s) => s.trim().replace(/'/g, ''));
    expect(listed.sort()).toEqual([...FINAL_STATES].sort());
  });

  /** The plan with sequential scans priced out: on a table this small the planner would read it whole anyway. */
  async function explain(sql: string): Promise<string> {
    const client = await pool.connect();
    try {
      await client.query('SET enable_seqscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`);
      await client.query('RESET enable_seqscan');
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    } finally {
      client.release();
    }
  }
});

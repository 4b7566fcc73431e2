import { ADVANCE_QUEUE } from '@openbot/engine';
import { FINAL_STATES } from '@openbot/domain';
import type { Pool } from 'pg';
import { Gauge, type Registry } from 'prom-client';

/**
 * The gauges read when Prometheus scrapes, not kept up to date by the work (docs/decisions/034):
 * the pool's counters, executions by workflow and state, and the advance queue's depth. Each
 * scrape costs two small SQL statements; a scrape within `MIN_INTERVAL_MS` of the last reuses
 * its rows, so several scrapers never multiply the load.
 */
const MIN_INTERVAL_MS = 5_000;

/** Non-final executions by workflow and state. No index covers `state`, so this reads the table (decision 034, "cost"). */
const EXECUTIONS_BY_STATE = {
  name: 'metrics.executions_by_state',
  text: `SELECT workflow, state::text AS state, count(*)::int AS n FROM executions
          WHERE state <> ALL($1::text[]) GROUP BY workflow, state`,
};

/** Jobs of the advance queue not yet taken: due now, or deferred (every lease has a recovery job due after it). */
const QUEUE_DEPTH = {
  name: 'metrics.queue_depth',
  text: `SELECT count(*) FILTER (WHERE start_after <= now())::int AS due, count(*) FILTER (WHERE start_after > now())::int AS deferred
           FROM pgboss.job WHERE name = $1 AND state < 'active'`,
};

export function registerScrapeGauges(registry: Registry, pool: Pool): void {
  let last: { at: number; rows: Promise<Snapshot> } | null = null;
  const snapshot = (): Promise<Snapshot> => {
    const now = Date.now();
    if (last === null || now - last.at >= MIN_INTERVAL_MS) {
      const rows = read(pool);
      last = { at: now, rows };
      // A failed read is not reused: the next scrape asks again.
      rows.catch(() => (last?.rows === rows ? (last = null) : undefined));
    }
    return last.rows;
  };
  new Gauge({
    name: 'openbot_db_pool_connections',
    help: 'The node\'s PostgreSQL pool: connections open (total), idle, and clients waiting for one.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
  new Gauge({
    name: 'openbot_executions',
    help: 'Executions not yet final, by workflow and state (outcome_unknown ones wait for an operator), on all nodes.',
    labelNames: ['workflow', 'state'],
    registers: [registry],
    async collect() {
      const { executions } = await snapshot();
      this.reset();
      for (const row of executions) this.set({ workflow: row.workflow, state: row.state }, row.n);
    },
  });
  new Gauge({
    name: 'openbot_executions_outcome_unknown',
    help: 'Executions waiting in outcome_unknown for an operator\'s decision, on all nodes.',
    registers: [registry],
    async collect() {
      const { executions } = await snapshot();
      this.set(executions.filter((r) => r.state === 'outcome_unknown').reduce((sum, r) => sum + r.n, 0));
    },
  });
  new Gauge({
    name: 'openbot_queue_jobs',
    help: 'Jobs of the execution-advance queue not yet taken: due now, or deferred to a later time.',
    labelNames: ['queue', 'when'],
    registers: [registry],
    async collect() {
      const { queue } = await snapshot();
      this.set({ queue: ADVANCE_QUEUE, when: 'due' }, queue.due);
      this.set({ queue: ADVANCE_QUEUE, when: 'deferred' }, queue.deferred);
    },
  });
}

interface Snapshot {
  readonly executions: ReadonlyArray<{ workflow: string; state: string; n: number }>;
  readonly queue: { due: number; deferred: number };
}

async function read(pool: Pool): Promise<Snapshot> {
  const [executions, queue] = await Promise.all([
    pool.query<{ workflow: string; state: string; n: number }>({ ...EXECUTIONS_BY_STATE, values: [[...FINAL_STATES]] }),
    pool.query<{ due: number; deferred: number }>({ ...QUEUE_DEPTH, values: [ADVANCE_QUEUE] }),
  ]);
  return { executions: executions.rows, queue: queue.rows[0] ?? { due: 0, deferred: 0 } };
}

import { advanceQueueDepth, executionCountsByState } from '@openbot/engine/node';
import type { Database, Sql } from '../database/sql';
import { Gauge, type Registry } from 'prom-client';

/**
 * The gauges read when Prometheus scrapes, not kept up to date by the work (docs/decisions/034):
 * the pool's counters, executions by workflow and state, and the advance queue's depth. Each
 * scrape costs two small SQL statements (the engine's reads, libs/engine/src/logs/metrics-reads.ts);
 * a scrape within `MIN_INTERVAL_MS` of the last reuses its rows, so scrapers never multiply the load.
 */
const MIN_INTERVAL_MS = 5_000;

export function registerScrapeGauges(registry: Registry, db: Database): void {
  let last: { at: number; rows: Promise<Snapshot> } | null = null;
  const snapshot = (): Promise<Snapshot> => {
    const now = Date.now();
    if (last === null || now - last.at >= MIN_INTERVAL_MS) {
      const rows = read(db);
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
      const connections = db.connections();
      this.set({ state: 'total' }, connections.total);
      this.set({ state: 'idle' }, connections.idle);
      this.set({ state: 'waiting' }, connections.waiting);
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
      for (const row of executions) this.set({ workflow: row.workflow, state: row.state }, row.count);
    },
  });
  new Gauge({
    name: 'openbot_executions_outcome_unknown',
    help: 'Executions waiting in outcome_unknown for an operator\'s decision, on all nodes.',
    registers: [registry],
    async collect() {
      const { executions } = await snapshot();
      this.set(executions.filter((r) => r.state === 'outcome_unknown').reduce((sum, r) => sum + r.count, 0));
    },
  });
  new Gauge({
    name: 'openbot_queue_jobs',
    help: 'Jobs of the execution-advance queue not yet taken: due now, or deferred to a later time.',
    labelNames: ['queue', 'when'],
    registers: [registry],
    async collect() {
      const { queue } = await snapshot();
      this.set({ queue: queue.queue, when: 'due' }, queue.due);
      this.set({ queue: queue.queue, when: 'deferred' }, queue.deferred);
    },
  });
}

interface Snapshot {
  readonly executions: Awaited<ReturnType<typeof executionCountsByState>>;
  readonly queue: Awaited<ReturnType<typeof advanceQueueDepth>>;
}

async function read(db: Sql): Promise<Snapshot> {
  const [executions, queue] = await Promise.all([executionCountsByState(db), advanceQueueDepth(db)]);
  return { executions, queue };
}

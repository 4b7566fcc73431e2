import type { Statement } from './statement';

/** Non-final executions by workflow and state ($1: the final states). No index covers `state`: it reads the table (decision 034). */
export const executionsByState: Statement = {
  name: 'engine.metrics_executions_by_state',
  text: `SELECT workflow, state::text AS state, count(*)::int AS count FROM executions
          WHERE state::text <> ALL($1::text[]) GROUP BY workflow, state`,
};

/** Jobs of a pg-boss queue not yet taken ($1: the queue), due now or deferred to a later time. */
export const queueDepth: Statement = {
  name: 'engine.metrics_queue_depth',
  text: `SELECT count(*) FILTER (WHERE start_after <= now())::int AS due, count(*) FILTER (WHERE start_after > now())::int AS deferred
           FROM pgboss.job WHERE name = $1 AND state < 'active'`,
};

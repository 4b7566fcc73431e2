import { FINAL_STATES, type Statement } from './statement';

/**
 * Non-final executions by workflow and state. The final states are written out (not a parameter)
 * so the planner proves the partial index `executions_active_idx` (migration 1767600000000) applies:
 * an index-only scan over the unfinished rows, never the table. A test checks the list against FINAL_STATES.
 */
export const executionsByState: Statement = {
  name: 'engine.metrics_executions_by_state',
  text: `SELECT workflow, state, count(*)::int AS count FROM executions
          WHERE state NOT IN ${FINAL_STATES} GROUP BY workflow, state`,
};

/** Jobs of a pg-boss queue not yet taken ($1: the queue), due now or deferred to a later time. */
export const queueDepth: Statement = {
  name: 'engine.metrics_queue_depth',
  text: `SELECT count(*) FILTER (WHERE start_after <= now())::int AS due, count(*) FILTER (WHERE start_after > now())::int AS deferred
           FROM pgboss.job WHERE name = $1 AND state < 'active'`,
};

import { FINAL_STATES, type Statement } from './statement';

/**
 * The SQL of waiting for another execution's end (waits.ts explains the lock order).
 */

export const awaitExecutions: Statement = {
  name: 'engine.await_executions',
  text: `WITH open AS (
             SELECT id FROM executions WHERE id = ANY($1::uuid[]) AND state NOT IN ${FINAL_STATES} ORDER BY id FOR NO KEY UPDATE
           ), marked AS (
             UPDATE executions e SET awaited = true FROM open WHERE e.id = open.id AND NOT e.awaited
           ), recorded AS (
             INSERT INTO execution_awaits (target_id, waiter_id) SELECT id, $2 FROM open ON CONFLICT DO NOTHING
           )
           SELECT id FROM open`,
};

export const awaitedStates: Statement = {
  name: 'engine.awaited_states',
  text: `SELECT id, state FROM executions WHERE id = ANY($1::uuid[]) AND state IN ${FINAL_STATES}`,
};

export const forgetAwaits: Statement = {
  name: 'engine.forget_awaits',
  text: 'DELETE FROM execution_awaits WHERE waiter_id = $1',
};

export const takeWaiters: Statement = {
  name: 'engine.take_waiters',
  text: 'DELETE FROM execution_awaits WHERE target_id = $1 RETURNING waiter_id',
};

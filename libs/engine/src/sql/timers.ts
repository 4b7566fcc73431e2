import type { Statement } from './statement';

/**
 * The SQL of timers: a wait's timer row, whether it is due, and retiring it when the wait ends.
 */

export const timerDue: Statement = {
  name: 'engine.timer_due',
  text: 'SELECT now() >= $1::timestamptz AS due',
};

export const insertTimer: Statement = {
  name: 'engine.insert_timer',
  text: 'INSERT INTO execution_timers (id, execution_id, due_at) VALUES (gen_random_uuid(), $1, $2)',
};

export const nextTimer: Statement = {
  name: 'engine.next_timer',
  text: 'SELECT EXTRACT(EPOCH FROM min(due_at) - now())::float8 AS seconds FROM execution_timers WHERE execution_id = $1 AND fired_at IS NULL',
};

export const endWaitTimers: Statement = {
  name: 'engine.end_wait_timers',
  text: 'UPDATE execution_timers SET fired_at = now() WHERE execution_id = $1 AND fired_at IS NULL',
};

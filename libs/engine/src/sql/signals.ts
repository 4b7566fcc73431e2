import type { Statement } from './statement';

/**
 * The SQL of signals: store and wake, consume for a wait, a phase's inbox read and consume, cancel
 * requests and their cancel signals, and the delivery check a running owner makes (EXE-15).
 */

export const insertSignal: Statement = {
  name: 'engine.insert_signal',
  text: 'INSERT INTO execution_signals (id, execution_id, name, key_id, data) VALUES ($1, $2, $3, $4, $5)',
};

export const wake: Statement = {
  name: 'engine.wake',
  text: `UPDATE executions SET state = 'queued', updated_at = now() WHERE id = $1 AND state = 'waiting' RETURNING id`,
};

export const consumeSignals: Statement = {
  name: 'engine.consume_signals',
  text: `UPDATE execution_signals SET consumed_at = now()
              WHERE execution_id = $1 AND consumed_at IS NULL AND name = ANY($2::text[])
              RETURNING id, name, key_id, data`,
};

export const inboxRead: Statement = {
  name: 'engine.inbox_read',
  text: `SELECT id, name, key_id, data FROM execution_signals
              WHERE execution_id = $1 AND consumed_at IS NULL AND name = ANY($2::text[]) AND NOT (id = ANY($3::uuid[]))
              ORDER BY created_at, id`,
};

export const inboxConsume: Statement = {
  name: 'engine.inbox_consume',
  text: 'UPDATE execution_signals SET consumed_at = now() WHERE execution_id = $1 AND id = ANY($2::uuid[]) AND consumed_at IS NULL',
};

export const requestCancel: Statement = {
  name: 'engine.request_cancel',
  text: `UPDATE executions SET state = 'cancelling', cancel_phase = cancel_phase + 1, updated_at = now() WHERE id = $1 RETURNING cancel_phase`,
};

export const insertCancelSignal: Statement = {
  name: 'engine.insert_cancel_signal',
  text: `INSERT INTO execution_signals (id, execution_id, name, cancel_phase) VALUES (gen_random_uuid(), $1, 'cancel', $2)`,
};

export const consumeCancel: Statement = {
  name: 'engine.consume_cancel',
  text: `UPDATE execution_signals SET consumed_at = now() WHERE execution_id = $1 AND name = 'cancel' AND consumed_at IS NULL`,
};

export const deliverSignal: Statement = {
  name: 'engine.deliver_signal',
  text: `WITH pending AS (
             SELECT s.id, e.cancel_phase > 0 AND s.cancel_phase = e.cancel_phase AS current
               FROM execution_signals s JOIN executions e ON e.id = s.execution_id
              WHERE s.execution_id = $1 AND s.name = 'cancel' AND s.consumed_at IS NULL
           ), stale AS (
             UPDATE execution_signals SET consumed_at = now()
              WHERE id IN (SELECT id FROM pending WHERE NOT current)
           )
           SELECT coalesce((SELECT bool_or(current) FROM pending), false) AS cancel, e.paused FROM executions e WHERE e.id = $1`,
};

import type { Statement } from './statement';

/**
 * The SQL of the call log (CALL-01): reads by ID, key, step and status, and each status change.
 */

const CALL_COLUMNS = 'id, call_key, kind, step, attempt, generation, safe, status, idempotency_key, key_id, result, error_id';

export const callById: Statement = {
  name: 'engine.call_by_id',
  text: `SELECT ${CALL_COLUMNS} FROM execution_calls WHERE id = $1`,
};

export const callsByKey: Statement = {
  name: 'engine.calls_by_key',
  text: `SELECT ${CALL_COLUMNS} FROM execution_calls WHERE execution_id = $1 AND call_key = $2 ORDER BY attempt`,
};

export const callLatestAttempt: Statement = {
  name: 'engine.call_latest_attempt',
  text: `SELECT ${CALL_COLUMNS} FROM execution_calls WHERE execution_id = $1 AND call_key = $2 ORDER BY attempt DESC LIMIT 1`,
};

export const callsByStep: Statement = {
  name: 'engine.calls_by_step',
  text: `SELECT ${CALL_COLUMNS} FROM execution_calls WHERE execution_id = $1 AND step = $2 ORDER BY call_key, attempt`,
};

export const callsLatestUnknown: Statement = {
  name: 'engine.calls_latest_unknown',
  text: `SELECT ${CALL_COLUMNS} FROM execution_calls WHERE execution_id = $1 AND status = 'unknown'
              ORDER BY created_at DESC LIMIT 1`,
};

export const callIntent: Statement = {
  name: 'engine.call_intent',
  text: `WITH ins AS (
                     INSERT INTO execution_calls (id, execution_id, call_key, step, attempt, generation, safe, status, idempotency_key, kind)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, 'intent', $8, $9)
                     ON CONFLICT (execution_id, call_key, attempt) DO NOTHING RETURNING id
                   )
                   SELECT id FROM ins UNION ALL SELECT id FROM execution_calls WHERE id = $1`,
};

/**
 * A call's history and, when it has none, its first attempt's intent, in one round trip: the
 * intent goes in only when no attempt of the key exists. Rows come oldest first; the caller's own
 * row (by `$1`) is there when the intent was written, also when a retry repeats the statement after
 * its reply was lost.
 */
export const callFirstIntent: Statement = {
  name: 'engine.call_first_intent',
  text: `WITH h AS (
                     SELECT ${CALL_COLUMNS} FROM execution_calls WHERE execution_id = $2 AND call_key = $3
                   ), ins AS (
                     INSERT INTO execution_calls (id, execution_id, call_key, step, attempt, generation, safe, status, idempotency_key, kind)
                     SELECT $1, $2, $3, $4, 1, $5, $6, 'intent', $7, $8 WHERE NOT EXISTS (SELECT 1 FROM h)
                     ON CONFLICT (execution_id, call_key, attempt) DO NOTHING RETURNING ${CALL_COLUMNS}
                   )
                   SELECT * FROM h UNION ALL SELECT * FROM ins ORDER BY attempt`,
};

export const callStatus: Statement = {
  name: 'engine.call_status',
  text: 'UPDATE execution_calls SET status = $2, updated_at = now() WHERE id = $1',
};

export const callFailed: Statement = {
  name: 'engine.call_failed',
  text: `UPDATE execution_calls SET status = 'failed', error_id = $2, updated_at = now() WHERE id = $1`,
};

export const callAbandon: Statement = {
  name: 'engine.call_abandon',
  text: `UPDATE execution_calls SET status = 'failed', updated_at = now() WHERE id = $1 AND status = 'sending'`,
};

export const callUnknown: Statement = {
  name: 'engine.call_unknown',
  text: `UPDATE execution_calls SET status = 'unknown', updated_at = now() WHERE id = $1 AND status = 'sending'`,
};

export const callResult: Statement = {
  name: 'engine.call_result',
  text: `UPDATE execution_calls c SET status = 'succeeded', key_id = $2, result = $3, updated_at = now()
                 FROM (SELECT id, status FROM execution_calls WHERE id = $1 FOR UPDATE) old
                WHERE c.id = old.id RETURNING old.status AS was`,
};

/** `callResult` unless another owner marked the call unknown (then no row: the late result's save resumes its execution too). */
export const callResultUnlessUnknown: Statement = {
  name: 'engine.call_result_unless_unknown',
  text: `UPDATE execution_calls SET status = 'succeeded', key_id = $2, result = $3, updated_at = now()
          WHERE id = $1 AND status <> 'unknown'`,
};

/** The IDs of an execution's call log entries (the read API's `callIds`). */
export const callIdsOfExecution: Statement = {
  name: 'engine.call_ids',
  text: 'SELECT id::text AS id FROM execution_calls WHERE execution_id = $1',
};

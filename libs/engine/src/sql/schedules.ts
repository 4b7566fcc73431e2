import type { Statement } from './statement';

/**
 * The SQL of schedules: upsert, read, the due ones, their fires and next fire time.
 */

/** Schedules each tick looks at, at most: the rest are found by the next tick. */
const TICK_BATCH = 32;

export const scheduleLock: Statement = {
  name: 'engine.schedule_lock',
  text: 'SELECT id FROM schedules WHERE name = $1 FOR UPDATE',
};

export const scheduleUpsert: Statement = {
  name: 'engine.schedule_upsert',
  text: `INSERT INTO schedules (id, name, cron, time_zone, workflow, organization_id, scope_kind, scope_id, resource_type, resource_id,
                                      key_id, input, identity_key_id, identity, missed, catch_up_seconds, next_fire_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
               ON CONFLICT (name) DO UPDATE SET
                 cron = EXCLUDED.cron, time_zone = EXCLUDED.time_zone, workflow = EXCLUDED.workflow,
                 organization_id = EXCLUDED.organization_id, scope_kind = EXCLUDED.scope_kind, scope_id = EXCLUDED.scope_id,
                 resource_type = EXCLUDED.resource_type, resource_id = EXCLUDED.resource_id,
                 key_id = EXCLUDED.key_id, input = EXCLUDED.input, identity_key_id = EXCLUDED.identity_key_id, identity = EXCLUDED.identity,
                 missed = EXCLUDED.missed, catch_up_seconds = EXCLUDED.catch_up_seconds,
                 -- The same times keep their place (a fire time already due is not lost by an update).
                 next_fire_at = CASE WHEN schedules.cron = EXCLUDED.cron AND schedules.time_zone = EXCLUDED.time_zone
                                     THEN schedules.next_fire_at ELSE EXCLUDED.next_fire_at END,
                 updated_at = now()
               RETURNING *`,
};

export const scheduleRemove: Statement = {
  name: 'engine.schedule_remove',
  text: 'DELETE FROM schedules WHERE name = $1',
};

export const scheduleGet: Statement = {
  name: 'engine.schedule_get',
  text: 'SELECT * FROM schedules WHERE name = $1',
};

export const scheduleFires: Statement = {
  name: 'engine.schedule_fires',
  text: `SELECT f.fire_at, f.execution_id FROM schedule_fires f JOIN schedules s ON s.id = f.schedule_id WHERE s.name = $1 ORDER BY f.fire_at`,
};

export const schedulesAnyDue: Statement = {
  name: 'engine.schedules_any_due',
  text: 'SELECT 1 FROM schedules WHERE next_fire_at <= $1 AND workflow = ANY($2::text[]) LIMIT 1',
};

export const schedulesDue: Statement = {
  name: 'engine.schedules_due',
  text: `SELECT * FROM schedules WHERE next_fire_at <= $1 AND workflow = ANY($2::text[])
                ORDER BY next_fire_at LIMIT ${TICK_BATCH} FOR UPDATE SKIP LOCKED`,
};

export const scheduleNext: Statement = {
  name: 'engine.schedule_next',
  text: 'UPDATE schedules SET next_fire_at = $2, updated_at = now() WHERE id = $1',
};

export const scheduleFire: Statement = {
  name: 'engine.schedule_fire',
  text: 'INSERT INTO schedule_fires (schedule_id, fire_at, execution_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
};

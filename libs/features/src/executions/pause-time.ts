import type { Queryable } from '@openbot/engine';

/**
 * How long an execution was paused in all, in milliseconds of the engine clock (TASK-03): the
 * closed pauses only, as the resume command summed them. Work subtracts it from its time, so a
 * paused execution's time does not count.
 */
export async function pausedMsOf(db: Queryable, executionId: string): Promise<number> {
  const { rows } = await db.query<{ ms: string }>({
    name: 'executions.paused_ms',
    text: 'SELECT paused_ms::text AS ms FROM execution_pauses WHERE execution_id = $1',
    values: [executionId],
  });
  return rows[0] === undefined ? 0 : Number(rows[0].ms);
}

/** In the pause command: the pause starts now, unless one is open already. */
export async function openPause(db: Queryable, executionId: string, now: number): Promise<void> {
  await db.query({
    name: 'executions.open_pause',
    text: `INSERT INTO execution_pauses (execution_id, paused_at) VALUES ($1, $2)
           ON CONFLICT (execution_id) DO UPDATE SET paused_at = COALESCE(execution_pauses.paused_at, EXCLUDED.paused_at)`,
    values: [executionId, new Date(now)],
  });
}

/** In the resume command: the open pause ends now and its length joins the total. */
export async function closePause(db: Queryable, executionId: string, now: number): Promise<void> {
  await db.query({
    name: 'executions.close_pause',
    text: `UPDATE execution_pauses SET paused_ms = paused_ms + GREATEST(0, floor(extract(epoch FROM ($2::timestamptz - paused_at)) * 1000))::bigint, paused_at = NULL
            WHERE execution_id = $1 AND paused_at IS NOT NULL`,
    values: [executionId, new Date(now)],
  });
}

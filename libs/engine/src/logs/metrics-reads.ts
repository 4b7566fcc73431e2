import type { Queryable } from '../base/ports';
import { ADVANCE_QUEUE } from '../base/queue';
import * as metricsSql from '../sql/metrics';

/**
 * The engine's side of the scrape-time gauges (docs/decisions/034-metrics.md): features read the
 * engine's tables only through the engine. Each is one small statement.
 */

/** Non-final executions by workflow and state, on all nodes. */
export async function executionCountsByState(db: Queryable): Promise<Array<{ workflow: string; state: string; count: number }>> {
  const { rows } = await db.query<{ workflow: string; state: string; count: number }>(metricsSql.executionsByState);
  return rows;
}

/** Jobs of the advance queue not yet taken: due now, or deferred (every lease has a recovery job due after it). */
export async function advanceQueueDepth(db: Queryable): Promise<{ queue: string; due: number; deferred: number }> {
  const { rows } = await db.query<{ due: number; deferred: number }>({ ...metricsSql.queueDepth, values: [ADVANCE_QUEUE] });
  return { queue: ADVANCE_QUEUE, due: rows[0]?.due ?? 0, deferred: rows[0]?.deferred ?? 0 };
}

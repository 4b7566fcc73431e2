import type { EngineContext } from './context';
import type { Queryable } from '../base/ports';
import type { PendingEvent } from '../base/store';
import { encodeEvent } from '../logs/event-log';
import { appendEvents } from '../sql/events';
import * as executionSql from '../sql/executions';

/**
 * Sets the pause flag of an execution whose row lock the caller holds, and appends its
 * `execution.paused` event under that lock (TASK-02): a reader of its events sees that it waits.
 */
export async function pauseLocked(ctx: EngineContext, tx: Queryable, executionId: string): Promise<void> {
  await tx.query({ ...executionSql.pause, values: [executionId] });
  await appendEvents(tx, executionId, [encodeEvent(ctx.sealed, executionId, 'execution.paused', null)]);
}

/** The `execution.resumed` event a resume appends under the row lock it holds. */
export function resumedEvent(ctx: EngineContext, executionId: string): PendingEvent {
  return encodeEvent(ctx.sealed, executionId, 'execution.resumed', null);
}

import { isFinal, type ExecutionState } from '@openbot/domain';
import type { EngineContext } from './context';
import type { LocalRun, Stop } from './local-run';
import type { ExecutionData } from './execution-data';
import { cancel } from './end';
import type { Json, Workflow } from '../authoring/workflow';
import type { Queryable } from '../base/ports';
import { enqueueAdvance } from '../base/queue';
import { selectExecution } from '../sql/executions';
import { retryStorage } from '../base/storage-retry';
import { withTransaction } from '../base/tx';
import * as executionSql from '../sql/executions';
import { pauseLocked, resumedEvent } from './pause-events';
import { appendEvents } from '../sql/events';

/**
 * Pause and resume (TASK-02). A pause is a flag (`executions.paused`) on an execution that then
 * waits, not a state of its own:
 * - running: its owner is told (SIGNALS_CHANNEL), closes the phase gate (no new sends), releases
 *   the phase's resources and parks it: `waiting`, no lease, its last checkpoint kept as it is;
 * - waiting: it stays waiting; whatever would wake it (a signal, a timer, a notice) is kept and
 *   only looked at once it is resumed;
 * - cancelling or final: nothing to pause (a cancel wins).
 * Resume clears the flag and queues a waiting execution: it continues from its saved state (the
 * interrupted phase runs again and reuses its saved call results, CALL-01).
 */

/**
 * In the caller's transaction. `notify`: it runs on some node, whose owner must close the gate.
 * `announce`: the pause appended `execution.paused` to the event log (readers are told after commit).
 */
export async function pauseIn(ctx: EngineContext, tx: Queryable, executionId: string): Promise<{ state: ExecutionState; paused: boolean; notify: boolean; announce: boolean } | null> {
  const row = await selectExecution(tx, executionId, true);
  if (!row) return null;
  if (isFinal(row.state) || row.state === 'cancelling') return { state: row.state, paused: false, notify: false, announce: false };
  if (!row.paused) await pauseLocked(ctx, tx, executionId);
  return { state: row.state, paused: true, notify: row.state === 'running', announce: !row.paused };
}

/**
 * In the caller's transaction. `wake`: it was parked, so it needs a claim (its job is enqueued here).
 * A resume appends `execution.resumed` to the event log under the row lock.
 */
export async function resumeIn(ctx: EngineContext, tx: Queryable, executionId: string): Promise<{ state: ExecutionState; resumed: boolean; wake: boolean } | null> {
  const row = await selectExecution(tx, executionId, true);
  if (!row) return null;
  if (!row.paused) return { state: row.state, resumed: false, wake: false };
  const { rows } = await tx.query<{ state: ExecutionState }>({
    ...executionSql.resume,
    values: [executionId],
  });
  await appendEvents(tx, executionId, [resumedEvent(ctx, executionId)]);
  const wake = row.state === 'waiting';
  if (wake) await enqueueAdvance(ctx.boss, tx, executionId);
  return { state: rows[0]!.state, resumed: true, wake };
}

/**
 * Parks a paused run: its gate is closed and its resources released already. It waits with its
 * last checkpoint (and any wait it saved) until resumed. Answers 'resumed' when the pause was
 * lifted meanwhile (the run is handed back to be claimed again), 'cancelling' when a cancel came.
 */
export async function park(ctx: EngineContext, run: LocalRun): Promise<'parked' | 'resumed' | 'cancelling' | 'lost'> {
  const outcome = await retryStorage(
    () =>
      withTransaction(ctx.pool, async (tx) => {
        const row = await selectExecution(tx, run.id, true);
        if (!row || row.generation !== run.generation || isFinal(row.state)) return 'lost' as const;
        if (row.state === 'cancelling') return 'cancelling' as const;
        if (!row.paused) {
          // Resumed before it parked: another claim runs it from its saved state.
          await tx.query({
            ...executionSql.unpark,
            values: [run.id],
          });
          await enqueueAdvance(ctx.boss, tx, run.id);
          return 'resumed' as const;
        }
        await tx.query({
          ...executionSql.park,
          values: [run.id],
        });
        return 'parked' as const;
      }),
    undefined,
  );
  if (outcome === 'lost') run.lost = true;
  return outcome;
}

/** A run whose pause arrived: its gate is closed and its phase resources released; it parks. */
export async function pauseRun(ctx: EngineContext, run: LocalRun, workflow: Workflow<Json, Json> | undefined, data: ExecutionData): Promise<Stop> {
  const parked = await park(ctx, run);
  if (parked === 'cancelling') return cancel(ctx, run, workflow, data);
  return parked === 'lost' ? 'lost' : 'waiting';
}

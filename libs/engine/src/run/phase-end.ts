import type { EngineContext } from './context';
import type { ExecutionData } from './execution-data';
import { AfterCommit, applyCommands, isEmptyOutbox, type PhaseOutbox } from './commands';
import { consumeRead } from './inbox';
import type { LocalRun, Stop } from './local-run';
import type { PendingEvent } from '../base/store';
import { appendEvents } from '../sql/events';
import { retryStorage } from '../base/storage-retry';
import { endExecution, endWithoutSideEffects } from './transitions';
import { withTransaction } from '../base/tx';
import { announceEnd, EndCollected } from './run-outcomes';
import type { Json, Workflow } from '../authoring/workflow';

/** The last phase's result, as its checkpoint would have saved it. */
export interface LastPhase {
  readonly step: number;
  readonly events: readonly PendingEvent[];
  readonly outbox: PhaseOutbox;
}

/**
 * How the end that follows a phase at once saves that phase's result:
 * - `transaction`: the end is a transaction anyway (the workflow has end work or end facts), or
 *   the checkpoint would be (it carries commands or reads), so one transaction does both
 *   (decision 048);
 * - `statement`: a plain phase (no events, no commands, no reads) before a plain end; the
 *   one-statement end also writes the phase's step under the checkpoint's fence (decision 056).
 */
export type PhaseEndMode = 'transaction' | 'statement';

/** The mode of the end that saves this last phase, or null: the phase's events go in its own checkpoint, then the end. */
export function endSavesPhase(workflow: Workflow<Json, Json>, phase: LastPhase): PhaseEndMode | null {
  if (workflow.end !== undefined || workflow.endedFacts !== undefined || !isEmptyOutbox(phase.outbox)) return 'transaction';
  return phase.events.length === 0 ? 'statement' : null;
}

/**
 * A completed end that also saves the last phase's result, in one commit instead of the phase's
 * checkpoint and then the end; `mode` says how (see PhaseEndMode). The checkpoint's fault points
 * are kept around it. Null when it did not end: a cancel, a takeover, a parent or a waiter moved
 * the row on, or the end work failed. Nothing was written then, and the caller saves the
 * checkpoint as before and lets the loop decide (EXE-12, ERR-01).
 */
export async function endWithLastPhase(
  ctx: EngineContext,
  run: LocalRun,
  workflow: Workflow<Json, Json>,
  data: ExecutionData,
  result: Json,
  phase: LastPhase,
  mode: PhaseEndMode,
): Promise<Stop | null> {
  await ctx.faults.hit('checkpoint.before-commit', { executionId: run.id, step: phase.step });
  const collected = new EndCollected();
  const after = new AfterCommit();
  const ended = mode === 'statement' ? await endInStatement(ctx, run, data, result, phase, collected) : await endInTransaction(ctx, run, workflow, data, result, phase, collected, after);
  if (!ended) return null;
  await ctx.faults.hit('checkpoint.committed', { executionId: run.id, step: phase.step });
  // The transaction's end counts itself (endExecution).
  if (mode === 'statement') ctx.metrics.executionEnded(workflow.name, 'completed');
  ctx.recentResults.completed(run.id, result);
  after.run(ctx);
  announceEnd(ctx, run.id, collected);
  return 'ended';
}

/** The end in one statement, which also writes the phase's step (decision 056). */
async function endInStatement(ctx: EngineContext, run: LocalRun, data: ExecutionData, result: Json, phase: LastPhase, collected: EndCollected): Promise<boolean> {
  const ended = await retryStorage(() => endWithoutSideEffects(ctx, ctx.pool, { id: run.id, generation: run.generation, data, outcome: 'completed', result, step: phase.step }), undefined);
  if (ended === null) return false;
  collected.stored.push(ended);
  return true;
}

/**
 * The fenced end update, then what the phase's checkpoint would have written (its events, the
 * signals it read, its commands to others), then the workflow's end work and `execution.ended`,
 * in one transaction (decision 048). False when it did not end or rolled back whole.
 */
async function endInTransaction(
  ctx: EngineContext,
  run: LocalRun,
  workflow: Workflow<Json, Json>,
  data: ExecutionData,
  result: Json,
  phase: LastPhase,
  collected: EndCollected,
  after: AfterCommit,
): Promise<boolean> {
  try {
    return await retryStorage(
      () =>
        withTransaction(ctx.pool, (tx) => {
          collected.clear();
          after.clear();
          return endExecution(ctx, tx, {
            id: run.id,
            generation: run.generation,
            workflow,
            data,
            outcome: 'completed',
            result,
            ...collected,
            phase: {
              step: phase.step,
              // Issued in this order without waiting in between (decision 052): the server runs them in
              // the same order as one after another, and a failure of any fails the end.
              save: (db) =>
                Promise.all([
                  appendEvents(db, run.id, phase.events),
                  consumeRead(db, run.id, phase.outbox.consumed),
                  applyCommands(ctx, db, run.id, phase.outbox.commands, after),
                ]).then(() => undefined),
            },
          });
        }),
      undefined,
    );
  } catch {
    // Rolled back whole: the checkpoint path and the loop's own end handle it as before.
    return false;
  }
}

import type { ExecutionState } from '@openbot/domain';
import type { EngineContext } from './context';
import { openData, type ExecutionData } from './execution-data';
import { identityFailure } from './identity-guard';
import type { LocalRun, Stop } from './local-run';
import { park } from './pause';
import { enqueueAdvance } from '../base/queue';
import { end } from './end';
import { resumeWait } from './run-outcomes';
import { forbidden } from './run-identity';
import type { ExecutionRow } from '../base/store';
import { selectExecution } from '../sql/executions';
import { retryStorage } from '../base/storage-retry';
import { withTransaction } from '../base/tx';
import type { Json, Workflow } from '../authoring/workflow';
import * as executionSql from '../sql/executions';

/** Where the program loop starts: the workflow, its opened data, its step and its state. */
export interface ProgramStart {
  readonly workflow: Workflow<Json, Json>;
  readonly data: ExecutionData;
  readonly step: number;
  readonly state: ExecutionState;
}

/**
 * The checks a claimed execution passes before its first phase, in order: its data opens, this
 * node has its workflow, a pause parks it, a saved wait is evaluated, and restored work still has
 * a valid identity (IDN-06). Each either hands the loop its start or stops the run.
 */
export async function startProgram(ctx: EngineContext, run: LocalRun, row: ExecutionRow): Promise<ProgramStart | Stop> {
  const workflow = ctx.workflows.get(row.workflow);
  let data: ExecutionData;
  try {
    data = openData(ctx.sealed, row);
  } catch (error) {
    return end(ctx, run, { workflow, data: { state: null, wake: null, wait: null }, outcome: 'failed', failure: { category: 'internal', cause: error } });
  }
  if (workflow === undefined) return releaseUnknownWorkflow(ctx, run);
  let state: ExecutionState = row.state;
  if (row.paused && state !== 'cancelling') {
    // Paused (TASK-02): whatever woke it waits until a resume (its wait, if any, stays saved).
    const parked = await park(ctx, run);
    if (parked !== 'cancelling') return parked === 'lost' ? 'lost' : 'waiting';
    state = 'cancelling';
  }
  if (data.wait !== null) {
    const resumed = await resumeWait(ctx, run, data, row.step);
    if (resumed === 'lost' || resumed === 'waiting') return resumed;
    data = resumed;
    state = (await currentState(ctx, run.id)) ?? state;
  }
  if (run.generation > 1 && state !== 'cancelling') {
    // Restored or woken work acts again only while its owner, actor and token are valid (IDN-06).
    // A cancel still runs: releasing resources needs no rights.
    const invalid = await identityFailure(ctx, run);
    if (invalid !== null) return end(ctx, run, { workflow, data, outcome: 'failed', failure: forbidden(invalid) });
  }
  return { workflow, data, step: row.step, state };
}

/**
 * This node does not have the workflow (a rolling deploy): hand the execution back for a node
 * that has it, instead of ending it; a job looks again after a lease.
 */
async function releaseUnknownWorkflow(ctx: EngineContext, run: LocalRun): Promise<Stop> {
  await retryStorage(
    () =>
      withTransaction(ctx.pool, async (tx) => {
        const { rowCount } = await tx.query({
          ...executionSql.releaseUnknownWorkflow,
          values: [run.id, run.generation],
        });
        if (rowCount === 1) await enqueueAdvance(ctx.boss, tx, run.id, ctx.leaseSeconds);
      }),
    undefined,
  );
  return 'drained';
}

export async function currentState(ctx: EngineContext, id: string): Promise<ExecutionState | null> {
  return (await selectExecution(ctx.pool, id))?.state ?? null;
}

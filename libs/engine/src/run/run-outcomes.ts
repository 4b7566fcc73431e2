/**
 * How a run of an execution leaves a phase without ending: a checkpoint, a wait, an unknown
 * outcome. Used by the program loop (program.ts); its end and its cancel are in end.ts.
 */
import type { ExecutionState } from '@openbot/domain';
import type { EngineContext } from './context';
import { encodeEvent } from '../logs/event-log';
import { initialData, openData, sealData, type ExecutionData } from './execution-data';
import { announceEvents } from '../logs/node-listener';
import { buildAdvanceJob, enqueueAdvance } from '../base/queue';
import { childIdentityOf } from './identity-guard';
import type { PendingEvent } from '../base/store';
import { checkpoint, insertExecutionWithJob, selectExecution } from '../sql/executions';
import { appendEvents } from '../sql/events';
import { retryStorage } from '../base/storage-retry';
import { evaluateWait } from './transitions';
import { withTransaction } from '../base/tx';
import { AfterCommit, applyCommands, isEmptyOutbox, NO_OUTBOX, type PhaseOutbox } from './commands';
import { consumeRead } from './inbox';
import { awaitExecutions } from './waits';
import type { Json, ResourceRef, Wake } from '../authoring/workflow';

import type { LocalRun, Stop } from './local-run';
import * as executionSql from '../sql/executions';
import * as timerSql from '../sql/timers';

/** The phase checkpoint; answers the stored state (it may have become `cancelling`) or null when lost. */
export async function saveCheckpoint(
  ctx: EngineContext,
  run: LocalRun,
  data: ExecutionData,
  step: number,
  events: readonly PendingEvent[],
  children: ReadonlyArray<{ id: string; workflow: string; input: Json; attached: boolean; resource: ResourceRef | null; identityHint?: Json | null }>,
  outbox: PhaseOutbox = NO_OUTBOX,
): Promise<ExecutionState | null> {
  const sealed = sealData(ctx.sealed, run.id, data);
  const after = new AfterCommit();
  await ctx.faults.hit('checkpoint.before-commit', { executionId: run.id, step });
  let result: Awaited<ReturnType<typeof checkpoint>>;
  if (children.length === 0 && events.length === 0 && isEmptyOutbox(outbox)) {
    // The hot path: grouped with other executions' checkpoints into one statement (each row fenced).
    result = await retryStorage(
      () => ctx.checkpoints.save({ id: run.id, generation: run.generation, keyId: sealed.keyId, data: sealed.data, step, state: 'running' }),
      undefined,
    );
  } else if (children.length === 0 && isEmptyOutbox(outbox)) {
    // One prepared statement, no explicit transaction.
    result = await retryStorage(
      () => checkpoint(ctx.pool, { id: run.id, generation: run.generation, keyId: sealed.keyId, data: sealed.data, step, state: 'running', events }),
      undefined,
    );
  } else {
    result = await retryStorage(
      () =>
        withTransaction(ctx.pool, async (tx) => {
          const saved = await checkpoint(tx, { id: run.id, generation: run.generation, keyId: sealed.keyId, data: sealed.data, step, state: 'running', events });
          if (saved === null) return null;
          await insertChildren(ctx, tx, run, children);
          // The signals the phase read and its commands to others commit with its result (STC-01).
          await consumeRead(tx, run.id, outbox.consumed);
          await applyCommands(ctx, tx, run.id, outbox.commands, after);
          return saved;
        }),
      undefined,
    );
  }
  if (result === null) {
    // Either lost, or this checkpoint committed and only its reply was lost (then it is saved).
    const row = await retryStorage(() => selectExecution(ctx.pool, run.id), undefined);
    if (!row || row.generation !== run.generation || row.step !== step) {
      run.lost = true;
      return null;
    }
    result = { state: row.state, cancelPhase: row.cancel_phase };
  }
  await ctx.faults.hit('checkpoint.committed', { executionId: run.id, step });
  if (events.length > 0) {
    announceEvents(ctx, run.id);
  }
  // Kept across retries: a retry after a lost reply applies nothing, and a spare wake-up is harmless.
  after.run(ctx);
  return result.state;
}

async function insertChildren(
  ctx: EngineContext,
  tx: Parameters<typeof insertExecutionWithJob>[0],
  run: LocalRun,
  children: ReadonlyArray<{ id: string; workflow: string; input: Json; attached: boolean; resource: ResourceRef | null; identityHint?: Json | null }>,
): Promise<void> {
  if (children.length === 0) return;
  const parentId = run.id;
  const parent = await selectExecution(tx, parentId);
  for (const child of children) {
    // The child acts with its parent's identity, sealed for its own row (IDN-02, SEC-01).
    const identity = childIdentityOf(ctx, run.id, run.identity, child.id, child.identityHint ?? null);
    const workflow = ctx.workflows.get(child.workflow);
    const state = workflow ? workflow.initial(child.input) : null;
    const sealed = sealData(ctx.sealed, child.id, initialData(state));
    await insertExecutionWithJob(
      tx,
      {
        id: child.id,
        workflow: child.workflow,
        organization_id: parent?.organization_id ?? null,
        scope_kind: parent?.scope_kind ?? 'service',
        scope_id: parent?.scope_id ?? child.id,
        resource_type: child.resource?.type ?? null,
        resource_id: child.resource?.id ?? null,
        parent_id: parentId,
        attached: child.attached,
        state: 'queued',
        owner_node: null,
        key_id: sealed.keyId,
        data: sealed.data,
        identity_key_id: identity?.keyId ?? null,
        identity: identity?.data ?? null,
      },
      null,
      await buildAdvanceJob(ctx.boss, child.id, 0),
    );
  }
}

/** Saves the waiting state, unless the wait is already satisfied (no lost wake-up). */
export async function waitFor(
  ctx: EngineContext,
  run: LocalRun,
  data: ExecutionData,
  step: number,
  wait: NonNullable<ExecutionData['wait']>,
  events: readonly PendingEvent[],
  children: ReadonlyArray<{ id: string; workflow: string; input: Json; attached: boolean; resource: ResourceRef | null; identityHint?: Json | null }> = [],
  outbox: PhaseOutbox = NO_OUTBOX,
): Promise<ExecutionData | 'lost' | 'waiting'> {
  const after = new AfterCommit();
  const outcome = await retryStorage(
    () =>
      withTransaction(ctx.pool, async (tx) => {
        // Before the own row lock: awaited rows are always locked first (waits.ts: no deadlock with their ends).
        const openAwaited = wait.executions !== undefined && wait.executions.length > 0 ? await awaitExecutions(tx, run.id, wait.executions) : [];
        const row = await selectExecution(tx, run.id, true);
        if (!row || row.generation !== run.generation) return 'lost' as const;
        if ((events.length > 0 || children.length > 0 || !isEmptyOutbox(outbox)) && row.step >= step) {
          // A retry after a commit whose reply was lost: it is saved already; apply nothing twice.
          const saved = openData(ctx.sealed, row);
          return row.state === 'waiting' ? saved : { ...saved, wait: null };
        }
        if (children.length > 0) await insertChildren(ctx, tx, run, children);
        // Read signals are consumed first: the wait below must not hand them to the next decision again.
        await consumeRead(tx, run.id, outbox.consumed);
        await applyCommands(ctx, tx, run.id, outbox.commands, after);
        await appendEvents(tx, run.id, events);
        const wake = row.state === 'cancelling' ? cancelWake() : await evaluateWait(ctx, tx, run.id, wait, openAwaited);
        const next: ExecutionData = wake ? { ...data, wake, wait: null } : { ...data, wake: null, wait };
        const sealed = sealData(ctx.sealed, run.id, next);
        await tx.query({
          ...executionSql.saveWait,
          values: [run.id, sealed.keyId, sealed.data, step, wake !== null],
        });
        if (!wake && wait.until !== null) {
          await tx.query({
            ...timerSql.insertTimer,
            values: [run.id, wait.until],
          });
          const seconds = Math.max(0, (new Date(wait.until).getTime() - ctx.clock.now()) / 1000);
          await enqueueAdvance(ctx.boss, tx, run.id, seconds);
        }
        return next;
      }),
    undefined,
  );
  if (outcome === 'lost') {
    run.lost = true;
    return 'lost';
  }
  if (events.length > 0) {
    announceEvents(ctx, run.id);
  }
  after.run(ctx);
  return outcome.wait === null ? outcome : 'waiting';
}

function cancelWake(): Wake {
  return { signals: [], timer: false, children: [] };
}

/** After a claim: re-checks the saved wait (woken by a signal, timer or child notice). */
export async function resumeWait(ctx: EngineContext, run: LocalRun, data: ExecutionData, step: number): Promise<ExecutionData | 'lost' | 'waiting'> {
  return waitFor(ctx, run, data, step, data.wait!, []);
}

/** An unsafe write whose result was lost: resources are closed; wait for a result or a decision (CALL-03, RES-02). */
export async function outcomeUnknown(ctx: EngineContext, run: LocalRun, data: ExecutionData, step: number): Promise<Stop> {
  const saved = await retryStorage(
    () =>
      withTransaction(ctx.pool, async (tx) => {
        const sealed = sealData(ctx.sealed, run.id, data);
        const { rowCount } = await tx.query({
          ...executionSql.outcomeUnknown,
          values: [run.id, run.generation, sealed.keyId, sealed.data, step],
        });
        if (rowCount === 0) {
          // The unknown result was saved meanwhile (a late result): queue it again to reuse that
          // result. Or a cancel committed before this node's gate heard of it: the row stays
          // `cancelling` (EXE-12), and the claim this queues runs the cancel.
          const { rowCount: requeued } = await tx.query({
            ...executionSql.requeueResolved,
            values: [run.id, run.generation],
          });
          if (requeued === 1) await enqueueAdvance(ctx.boss, tx, run.id);
          return requeued === 1 ? ('requeued' as const) : false;
        }
        await appendEvents(tx, run.id, [encodeEvent(ctx.sealed, run.id, 'execution.outcome_unknown', null)]);
        return true;
      }),
    undefined,
  );
  if (!saved) {
    run.lost = true;
    return 'lost';
  }
  if (saved === 'requeued') return 'waiting';
  announceEvents(ctx, run.id);
  return 'waiting';
}


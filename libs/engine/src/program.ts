import { newId, type ExecutionId, type ExecutionState } from '@openbot/domain';
import { CallLog, OutcomeUnknown } from './call-log';
import type { EngineContext } from './context';
import { encodeEvent } from './event-log';
import { CorruptExecutionData, openData, sealData, waitSpec, type ExecutionData } from './execution-data';
import { SIGNALS_CHANNEL } from './node-listener';
import { enqueueAdvance } from './queue';
import { backoffMs, GateClosed, RunScope, sleep, type GateReason } from './run-scope';
import { appendEvents, checkpoint, insertExecution, selectExecution, type ExecutionRow, type PendingEvent } from './store';
import { isConnectionFailure, retryStorage } from './storage-retry';
import { cascadeCancel, endExecution, endWithoutSideEffects, evaluateWait, openChildren, resumeUnknown } from './transitions';
import { withTransaction } from './tx';
import type { Json, PhaseContext, PhaseOutcome, ResourceRef, Wake, Workflow } from './workflow';

/** One run of an execution on this node, from its claim to its wait, end, or loss. */
export interface LocalRun {
  readonly id: string;
  readonly generation: number;
  /** The scope of the phase running now, if any: signals close its gate. */
  scope: RunScope | null;
  /** Set when the node drains: the loop stops at its next checkpoint. */
  draining: boolean;
  lost: boolean;
  /** Aborted with 'cancel', 'lease-lost' or 'shutdown' between phases too (backoff sleeps end at once). */
  readonly abort: AbortController;
}

type Stop = 'lost' | 'waiting' | 'ended' | 'drained';

/**
 * The program loop (EXE-07, EXE-08): one loop for recovery, owner checks, cancellation and phase
 * failures. The feature supplies `next` and `end`; the loop runs the chosen phase in a RunScope,
 * closes its resources, saves its result in a fenced checkpoint, then runs its `after` work.
 */
export async function runProgram(ctx: EngineContext, run: LocalRun, row: ExecutionRow): Promise<Stop> {
  const workflow = ctx.workflows.get(row.workflow);
  let data: ExecutionData;
  try {
    data = openData(ctx.sealed, row);
  } catch (error) {
    return finish(ctx, run, workflow, { state: null, wake: null, wait: null }, 'failed', undefined, { category: 'internal', cause: error });
  }
  if (workflow === undefined) {
    // This node does not have the workflow (a rolling deploy): hand the execution back for a
    // node that has it, instead of ending it; a job looks again after a lease.
    await retryStorage(
      () =>
        withTransaction(ctx.pool, async (tx) => {
          const { rowCount } = await tx.query({
            name: 'engine.release_unknown_workflow',
            text: 'UPDATE executions SET lease_until = now(), updated_at = now() WHERE id = $1 AND generation = $2',
            values: [run.id, run.generation],
          });
          if (rowCount === 1) await enqueueAdvance(ctx.boss, tx, run.id, ctx.leaseSeconds);
        }),
      undefined,
    );
    return 'drained';
  }
  let step = row.step;
  let state: ExecutionState = row.state;
  if (data.wait !== null) {
    const resumed = await resumeWait(ctx, run, data, step);
    if (resumed === 'lost' || resumed === 'waiting') return resumed;
    data = resumed;
    state = (await currentState(ctx, run.id)) ?? state;
  }
  for (;;) {
    if (run.lost) return 'lost';
    if (state === 'cancelling' || run.abort.signal.reason === 'cancel') return cancel(ctx, run, workflow, data);
    if (run.draining) return 'drained';
    const decision = workflow.next(data.state, data.wake);
    if ('end' in decision) {
      if ((await retryStorage(() => openChildren(ctx.pool, run.id), undefined)) > 0) {
        // An owner waits for its attached children before it ends (EXE-13).
        const waited = await waitFor(ctx, run, data, step, { signals: [], until: null, children: true }, []);
        if (waited === 'lost' || waited === 'waiting') return waited;
        data = waited;
        continue;
      }
      return decision.end === 'completed'
        ? finish(ctx, run, workflow, data, 'completed', decision.result ?? null)
        : finish(ctx, run, workflow, data, 'failed', undefined, { category: decision.category ?? 'internal', cause: decision.cause });
    }
    const phase = workflow.phases[decision.phase];
    if (!phase) {
      return finish(ctx, run, workflow, data, 'failed', undefined, {
        category: 'internal',
        cause: new Error(`workflow ${workflow.name} has no phase "${decision.phase}"`),
      });
    }
    const events: PendingEvent[] = [];
    const children: Array<{ id: string; workflow: string; input: Json; attached: boolean; resource: ResourceRef | null }> = [];
    let outcome: PhaseOutcome<Json> | null = null;
    for (let attempt = 1; outcome === null; attempt++) {
      const scope = new RunScope();
      run.scope = scope;
      if (run.abort.signal.aborted) scope.closeGate(run.abort.signal.reason as GateReason);
      const context: PhaseContext<Json> = {
        executionId: run.id as ExecutionId,
        generation: run.generation,
        activity: `${decision.phase}#${run.generation}`,
        step: step + 1,
        state: data.state,
        wake: data.wake,
        signal: scope.signal,
        resources: scope.resources,
        calls: new CallLog({
          db: ctx.pool,
          sealed: ctx.sealed,
          faults: ctx.faults,
          executionId: run.id,
          generation: run.generation,
          step: step + 1,
          scope,
          onLateResult: () => retryStorage(() => withTransaction(ctx.pool, (tx) => resumeUnknown(ctx, tx, run.id)), undefined).then(() => undefined),
        }),
        emit: (type, payload, position) => events.push(encodeEvent(ctx.sealed, run.id, type, payload ?? null, position)),
        startChild: (child) => {
          const id = newId<ExecutionId>();
          children.push({ id, workflow: child.workflow, input: child.input, attached: child.attached ?? true, resource: child.resource ?? null });
          return id;
        },
      };
      try {
        await ctx.faults.hit('phase.started', { executionId: run.id, step: step + 1 });
        outcome = await phase.run(context);
        await scope.close();
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows whatever the scope's close threw
        if (scope.closeFailure !== null) throw scope.closeFailure;
      } catch (error) {
        await scope.close();
        run.scope = null;
        const reason = error instanceof GateClosed ? error.reason : scope.gateClosed ? (scope.signal.reason as string) : null;
        if (run.lost || reason === 'lease-lost') return 'lost';
        if (reason === 'cancel') return cancel(ctx, run, workflow, data);
        if (reason === 'shutdown') return 'drained';
        if (error instanceof OutcomeUnknown) return outcomeUnknown(ctx, run, data, step);
        if (attempt <= (phase.retries ?? 0)) {
          try {
            await sleep(backoffMs(attempt), run.abort.signal);
          } catch {
            if (run.lost || run.abort.signal.reason === 'lease-lost') return 'lost';
            return run.abort.signal.reason === 'cancel' || (await currentState(ctx, run.id)) === 'cancelling'
              ? cancel(ctx, run, workflow, data)
              : 'drained';
          }
          events.length = 0;
          children.length = 0;
          continue;
        }
        // The first failure is the execution's; releases that failed after it get records of their own (ERR-04).
        const later = scope.releaseFailures.filter((f) => f !== error);
        return finish(ctx, run, workflow, data, 'failed', undefined, { category: 'internal', cause: error, later });
      }
      run.scope = null;
    }
    const next: ExecutionData = { state: outcome.state, wake: null, wait: null };
    let saved: Awaited<ReturnType<typeof saveCheckpoint>> | Awaited<ReturnType<typeof waitFor>>;
    try {
      saved = 'wait' in outcome
        ? await waitFor(ctx, run, next, step + 1, waitSpec(outcome.wait), events, children)
        : await saveCheckpoint(ctx, run, next, step + 1, events, children);
    } catch (error) {
      // The database refused the checkpoint itself (a constraint, invalid data): a failure of
      // this execution, not an outage to retry forever (CALL-07). Outages were retried above.
      if (isConnectionFailure(error) || !isDatabaseRefusal(error)) throw error;
      return finish(ctx, run, workflow, data, 'failed', undefined, { category: 'internal', cause: error });
    }
    if (saved === null || saved === 'lost') return 'lost';
    if (saved === 'waiting') {
      // The phase's result is saved with its wait: its `after` work still runs (EXE-07).
      if (phase.after) await phase.after({ executionId: run.id as ExecutionId, state: next.state });
      return 'waiting';
    }
    if (typeof saved === 'string') {
      data = next;
      state = saved;
    } else {
      data = saved;
      state = 'running';
    }
    step += 1;
    if (phase.after) await phase.after({ executionId: run.id as ExecutionId, state: data.state });
  }
}

/** An error PostgreSQL answered with (it carries an SQLSTATE), as opposed to a crash of this run. */
function isDatabaseRefusal(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

async function currentState(ctx: EngineContext, id: string): Promise<ExecutionState | null> {
  return (await selectExecution(ctx.pool, id))?.state ?? null;
}

/** The phase checkpoint; answers the stored state (it may have become `cancelling`) or null when lost. */
async function saveCheckpoint(
  ctx: EngineContext,
  run: LocalRun,
  data: ExecutionData,
  step: number,
  events: readonly PendingEvent[],
  children: ReadonlyArray<{ id: string; workflow: string; input: Json; attached: boolean; resource: ResourceRef | null }>,
): Promise<ExecutionState | null> {
  const sealed = sealData(ctx.sealed, run.id, data);
  await ctx.faults.hit('checkpoint.before-commit', { executionId: run.id, step });
  let result: Awaited<ReturnType<typeof checkpoint>>;
  if (children.length === 0) {
    // The hot path: one prepared statement, no explicit transaction.
    result = await retryStorage(
      () => checkpoint(ctx.pool, { id: run.id, generation: run.generation, keyId: sealed.keyId, data: sealed.data, step, state: 'running', leaseSeconds: ctx.leaseSeconds, events }),
      undefined,
    );
  } else {
    result = await retryStorage(
      () =>
        withTransaction(ctx.pool, async (tx) => {
          const saved = await checkpoint(tx, { id: run.id, generation: run.generation, keyId: sealed.keyId, data: sealed.data, step, state: 'running', leaseSeconds: ctx.leaseSeconds, events });
          if (saved === null) return null;
          await insertChildren(ctx, tx, run.id, children);
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
    result = { lastSeq: row.last_seq, state: row.state, cancelPhase: row.cancel_phase };
  }
  await ctx.faults.hit('checkpoint.committed', { executionId: run.id, step });
  if (events.length > 0) {
    ctx.notifier.notify('openbot_events', run.id);
    ctx.listener.wake(run.id);
  }
  return result.state;
}

async function insertChildren(
  ctx: EngineContext,
  tx: Parameters<typeof insertExecution>[0],
  parentId: string,
  children: ReadonlyArray<{ id: string; workflow: string; input: Json; attached: boolean; resource: ResourceRef | null }>,
): Promise<void> {
  const parent = await selectExecution(tx, parentId);
  for (const child of children) {
    const workflow = ctx.workflows.get(child.workflow);
    const state = workflow ? workflow.initial(child.input) : null;
    const sealed = sealData(ctx.sealed, child.id, { state, wake: null, wait: null });
    await insertExecution(tx, {
      id: child.id,
      workflow: child.workflow,
      organizationId: parent?.organization_id ?? null,
      scopeKind: parent?.scope_kind ?? 'service',
      scopeId: parent?.scope_id ?? child.id,
      resourceType: child.resource?.type ?? null,
      resourceId: child.resource?.id ?? null,
      parentId,
      attached: child.attached,
      state: 'queued',
      ownerNode: null,
      leaseSeconds: null,
      keyId: sealed.keyId,
      data: sealed.data,
    });
    await enqueueAdvance(ctx.boss, tx, child.id);
  }
}

/** Saves the waiting state, unless the wait is already satisfied (no lost wake-up). */
async function waitFor(
  ctx: EngineContext,
  run: LocalRun,
  data: ExecutionData,
  step: number,
  wait: NonNullable<ExecutionData['wait']>,
  events: readonly PendingEvent[],
  children: ReadonlyArray<{ id: string; workflow: string; input: Json; attached: boolean; resource: ResourceRef | null }> = [],
): Promise<ExecutionData | 'lost' | 'waiting'> {
  const outcome = await retryStorage(
    () =>
      withTransaction(ctx.pool, async (tx) => {
        const row = await selectExecution(tx, run.id, true);
        if (!row || row.generation !== run.generation) return 'lost' as const;
        if ((events.length > 0 || children.length > 0) && row.step >= step) {
          // A retry after a commit whose reply was lost: it is saved already; apply nothing twice.
          const saved = openData(ctx.sealed, row);
          return row.state === 'waiting' ? saved : { ...saved, wait: null };
        }
        if (children.length > 0) await insertChildren(ctx, tx, run.id, children);
        await appendEvents(tx, run.id, events);
        const wake = row.state === 'cancelling' ? cancelWake() : await evaluateWait(ctx, tx, run.id, wait);
        const next: ExecutionData = wake ? { state: data.state, wake, wait: null } : { state: data.state, wake: null, wait };
        const sealed = sealData(ctx.sealed, run.id, next);
        await tx.query({
          name: 'engine.save_wait',
          text: `UPDATE executions SET key_id = $2, data = $3, step = $4,
                   state = CASE WHEN state = 'cancelling' THEN state WHEN $5 THEN 'running' ELSE 'waiting' END,
                   lease_until = CASE WHEN $5 THEN lease_until ELSE NULL END, updated_at = now()
                 WHERE id = $1`,
          values: [run.id, sealed.keyId, sealed.data, step, wake !== null],
        });
        if (!wake && wait.until !== null) {
          await tx.query({
            name: 'engine.insert_timer',
            text: 'INSERT INTO execution_timers (id, execution_id, due_at) VALUES (gen_random_uuid(), $1, $2)',
            values: [run.id, wait.until],
          });
          const seconds = Math.max(0, (new Date(wait.until).getTime() - Date.now()) / 1000);
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
    ctx.notifier.notify('openbot_events', run.id);
    ctx.listener.wake(run.id);
  }
  return outcome.wait === null ? outcome : 'waiting';
}

function cancelWake(): Wake {
  return { signals: [], timer: false, children: [] };
}

/** After a claim: re-checks the saved wait (woken by a signal, timer or child notice). */
async function resumeWait(ctx: EngineContext, run: LocalRun, data: ExecutionData, step: number): Promise<ExecutionData | 'lost' | 'waiting'> {
  return waitFor(ctx, run, data, step, data.wait!, []);
}

/**
 * Cancel (EXE-11, EXE-13): the phase gate is already closed and its resources released;
 * attached children are cancelled too and waited for; then the execution ends `cancelled`.
 */
async function cancel(ctx: EngineContext, run: LocalRun, workflow: Workflow<Json, Json> | undefined, data: ExecutionData): Promise<Stop> {
  const outcome = await retryStorage(
    () =>
      withTransaction(ctx.pool, async (tx) => {
        const row = await selectExecution(tx, run.id, true);
        if (!row || row.generation !== run.generation) return 'lost' as const;
        await tx.query({
          name: 'engine.consume_cancel',
          text: `UPDATE execution_signals SET consumed_at = now() WHERE execution_id = $1 AND name = 'cancel' AND consumed_at IS NULL`,
          values: [run.id],
        });
        const cancelled = await cascadeCancel(ctx, tx, run.id);
        if (cancelled.length > 0 || (await openChildren(tx, run.id)) > 0) {
          const next: ExecutionData = { ...data, wait: { signals: [], until: null, children: true } };
          const sealed = sealData(ctx.sealed, run.id, next);
          await tx.query({
            name: 'engine.cancel_wait',
            text: `UPDATE executions SET key_id = $2, data = $3, lease_until = NULL, updated_at = now() WHERE id = $1`,
            values: [run.id, sealed.keyId, sealed.data],
          });
          return { waiting: cancelled };
        }
        const ended = await endExecution(ctx, tx, { id: run.id, generation: run.generation, workflow, data, outcome: 'cancelled' });
        return ended ? 'ended' : ('lost' as const);
      }),
    undefined,
  );
  if (outcome === 'lost') {
    run.lost = true;
    return 'lost';
  }
  ctx.notifier.notify('openbot_events', run.id);
  ctx.listener.wake(run.id);
  if (outcome === 'ended') return 'ended';
  for (const child of outcome.waiting) ctx.notifier.notify(SIGNALS_CHANNEL, child);
  return 'waiting';
}

/** An unsafe write whose result was lost: resources are closed; wait for a result or a decision (CALL-03, RES-02). */
async function outcomeUnknown(ctx: EngineContext, run: LocalRun, data: ExecutionData, step: number): Promise<Stop> {
  const saved = await retryStorage(
    () =>
      withTransaction(ctx.pool, async (tx) => {
        const sealed = sealData(ctx.sealed, run.id, data);
        const { rowCount } = await tx.query({
          name: 'engine.outcome_unknown',
          text: `UPDATE executions SET state = 'outcome_unknown', key_id = $3, data = $4, step = $5, lease_until = NULL, updated_at = now()
                  WHERE id = $1 AND generation = $2
                    AND EXISTS (SELECT 1 FROM execution_calls WHERE execution_id = $1 AND status = 'unknown')`,
          values: [run.id, run.generation, sealed.keyId, sealed.data, step],
        });
        if (rowCount === 0) {
          // The unknown result was saved meanwhile (a late result): queue it again to reuse that result.
          const { rowCount: requeued } = await tx.query({
            name: 'engine.requeue_resolved',
            text: `UPDATE executions SET state = CASE WHEN state = 'cancelling' THEN state ELSE 'queued' END, lease_until = NULL, updated_at = now()
                    WHERE id = $1 AND generation = $2 AND state IN ('running', 'cancelling')`,
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
  ctx.notifier.notify('openbot_events', run.id);
  ctx.listener.wake(run.id);
  return 'waiting';
}

async function finish(
  ctx: EngineContext,
  run: LocalRun,
  workflow: Workflow<Json, Json> | undefined,
  data: ExecutionData,
  outcome: 'completed' | 'failed' | 'cancelled' | 'interrupted',
  result?: Json,
  failure?: { category: 'internal' | 'timeout'; cause: unknown; later?: readonly unknown[] },
): Promise<Stop> {
  let ended = false;
  if (!failure && !workflow?.end) {
    ended = await retryStorage(() => endWithoutSideEffects(ctx, ctx.pool, { id: run.id, generation: run.generation, data, outcome, result }), undefined);
  }
  if (!ended) {
  try {
      ended = await retryStorage(
        () => withTransaction(ctx.pool, (tx) => endExecution(ctx, tx, { id: run.id, generation: run.generation, workflow, data, outcome, result, failure })),
        undefined,
      );
    } catch (error) {
      if (error instanceof CorruptExecutionData || outcome !== 'completed') throw error;
      // The feature's end work failed: the execution fails with its own sealed cause (ERR-01).
      ended = await retryStorage(
        () =>
          withTransaction(ctx.pool, (tx) =>
            endExecution(ctx, tx, { id: run.id, generation: run.generation, workflow: undefined, data, outcome: 'failed', failure: { category: 'internal', cause: error } }),
          ),
        undefined,
      );
    }
  }
  if (!ended) {
    // A cancel that arrived after the last checkpoint wins over completing (EXE-12).
    const row = await retryStorage(() => selectExecution(ctx.pool, run.id), undefined);
    if (row && row.generation === run.generation && row.state === 'cancelling') return cancel(ctx, run, workflow, data);
    run.lost = true;
    return 'lost';
  }
  ctx.notifier.notify('openbot_events', run.id);
  ctx.listener.wake(run.id);
  return 'ended';
}

/** Delivers a stored signal to a phase running here: a cancel closes its gate (EXE-11). */
export async function deliverSignal(ctx: EngineContext, run: LocalRun): Promise<void> {
  const row = await selectExecution(ctx.pool, run.id);
  if (row && row.state === 'cancelling') {
    run.scope?.closeGate('cancel');
    run.abort.abort('cancel');
  }
}

export { enqueueAdvance };

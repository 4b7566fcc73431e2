import { newId, type ExecutionId, type ExecutionState } from '@openbot/domain';
import { CallFailed, CallLog, OutcomeUnknown } from './call-log';
import { seededRandom } from './clock';
import type { EngineContext } from './context';
import { encodeEvent } from './event-log';
import { EventPublisher } from './event-publisher';
import { openData, waitSpec, type ExecutionData } from './execution-data';
import { assertAudience, identityFailure, IdentityInvalid } from './identity-guard';
import { enqueueAdvance } from './queue';
import { backoffMs, GateClosed, RunScope, sleep, type GateReason } from './run-scope';
import { selectExecution, type ExecutionRow, type PendingEvent } from './store';
import { isConnectionFailure, retryStorage } from './storage-retry';
import { openChildren, resumeUnknown } from './transitions';
import { withTransaction } from './tx';
import type { Json, PhaseContext, PhaseOutcome, ResourceRef } from './workflow';
import type { LocalRun, Stop } from './local-run';
import { cancel, finish, outcomeUnknown, resumeWait, saveCheckpoint, waitFor } from './run-outcomes';
import { collectCommands, type OutgoingCommand } from './commands';
import { RunInbox } from './inbox';
import { park, pauseRun } from './pause';

export type { LocalRun };


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
  if (row.paused && state !== 'cancelling') {
    // Paused (TASK-02): whatever woke it waits until a resume (its wait, if any, stays saved).
    const parked = await park(ctx, run);
    if (parked !== 'cancelling') return parked === 'lost' ? 'lost' : 'waiting';
    state = 'cancelling';
  }
  if (data.wait !== null) {
    const resumed = await resumeWait(ctx, run, data, step);
    if (resumed === 'lost' || resumed === 'waiting') return resumed;
    data = resumed;
    state = (await currentState(ctx, run.id)) ?? state;
  }
  if (run.generation > 1 && state !== 'cancelling') {
    // Restored or woken work acts again only while its owner, actor and token are valid (IDN-06).
    // A cancel still runs: releasing resources needs no rights.
    const invalid = await identityFailure(ctx, run);
    if (invalid !== null) return finish(ctx, run, workflow, data, 'failed', undefined, forbidden(invalid));
  }
  for (;;) {
    if (run.lost) return 'lost';
    if (state === 'cancelling' || run.abort.signal.reason === 'cancel') return cancel(ctx, run, workflow, data);
    if (run.abort.signal.reason === 'pause') return pauseRun(ctx, run, workflow, data);
    if (run.draining) return 'drained';
    const decision = workflow.next(data.state, data.wake, ctx.clock);
    if ('end' in decision) {
      if (data.spawned === true && (await retryStorage(() => openChildren(ctx.pool, run.id), undefined)) > 0) {
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
    const commands: OutgoingCommand[] = [];
    let inbox: RunInbox | null = null;
    let outcome: PhaseOutcome<Json> | null = null;
    for (let attempt = 1; outcome === null; attempt++) {
      const scope = new RunScope();
      run.scope = scope;
      if (run.abort.signal.aborted) scope.closeGate(run.abort.signal.reason as GateReason);
      const publisher = new EventPublisher(ctx, run, scope);
      // Made on first use: most phases never draw a number, and the hash is not free.
      let random: (() => number) | null = null;
      const seed = data.seed ?? run.id;
      const phaseStep = step + 1;
      inbox = new RunInbox(ctx.pool, ctx.sealed, run.id, scope.signal, ctx.leaseSeconds * 1000);
      run.inbox = inbox;
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
          failures: ctx.failures,
          checkIdentity: ctx.identityCheck === undefined || run.identity === null ? undefined : () => checkBeforeSend(ctx, run),
          onLateResult: () => retryStorage(() => withTransaction(ctx.pool, (tx) => resumeUnknown(ctx, tx, run.id)), undefined).then(() => undefined),
        }),
        publisher,
        clock: ctx.clock,
        random: () => (random ??= seededRandom(seed, phaseStep))(),
        childResult: (childId) => childResult(ctx, run.id, childId),
        emit: (type, payload, position) => events.push(encodeEvent(ctx.sealed, run.id, type, payload ?? null, position)),
        startChild: (child) => {
          const childWorkflow = ctx.workflows.get(child.workflow);
          if (childWorkflow) assertAudience(childWorkflow, run.scopeKind);
          const id = newId<ExecutionId>();
          children.push({ id, workflow: child.workflow, input: child.input, attached: child.attached ?? true, resource: child.resource ?? null });
          return id;
        },
        inbox,
        commands: collectCommands(commands),
      };
      try {
        await ctx.faults.hit('phase.started', { executionId: run.id, step: step + 1 });
        outcome = await phase.run(context);
        await publisher.flush();
        await scope.close();
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows whatever the scope's close threw
        if (scope.closeFailure !== null) throw scope.closeFailure;
      } catch (error) {
        await scope.close();
        run.scope = null;
        run.inbox = null;
        const reason = error instanceof GateClosed ? error.reason : scope.gateClosed ? (scope.signal.reason as string) : null;
        if (run.lost || reason === 'lease-lost') return 'lost';
        if (reason === 'cancel') return cancel(ctx, run, workflow, data);
        if (reason === 'shutdown') return 'drained';
        if (reason === 'pause') return pauseRun(ctx, run, workflow, data);
        if (error instanceof OutcomeUnknown) return outcomeUnknown(ctx, run, data, step);
        if (run.identityInvalid !== null) {
          // Not retried: the identity will not become valid again by waiting (IDN-06).
          return finish(ctx, run, workflow, data, 'failed', undefined, { ...forbidden(run.identityInvalid), later: scope.releaseFailures });
        }
        if (attempt <= (phase.retries ?? 0)) {
          try {
            await sleep(backoffMs(attempt), run.abort.signal);
          } catch {
            if (run.lost || run.abort.signal.reason === 'lease-lost') return 'lost';
            if (run.abort.signal.reason === 'pause') return pauseRun(ctx, run, workflow, data);
            return run.abort.signal.reason === 'cancel' || (await currentState(ctx, run.id)) === 'cancelling'
              ? cancel(ctx, run, workflow, data)
              : 'drained';
          }
          events.length = 0;
          children.length = 0;
          commands.length = 0;
          continue;
        }
        // The first failure is the execution's; releases that failed after it get records of their own (ERR-04).
        const later = scope.releaseFailures.filter((f) => f !== error);
        // A call that failed for good has its error record already: the execution ends with its ID (ERR-01).
        const errorId = error instanceof CallFailed && error.errorId !== null ? { errorId: error.errorId } : {};
        return finish(ctx, run, workflow, data, 'failed', undefined, { category: 'internal', cause: error, ...errorId, later });
      }
      run.scope = null;
      run.inbox = null;
    }
    const outbox = { commands, consumed: inbox?.consumed ?? [] };
    // A phase that caught the refusal of its send still does not get its result saved.
    if (run.identityInvalid !== null) return finish(ctx, run, workflow, data, 'failed', undefined, forbidden(run.identityInvalid));
    const next: ExecutionData = {
      state: outcome.state,
      wake: null,
      wait: null,
      ...(data.spawned || children.length > 0 ? { spawned: true } : {}),
      ...(data.seed !== undefined ? { seed: data.seed } : {}),
    };
    let saved: Awaited<ReturnType<typeof saveCheckpoint>> | Awaited<ReturnType<typeof waitFor>>;
    try {
      saved = 'wait' in outcome
        ? await waitFor(ctx, run, next, step + 1, waitSpec(outcome.wait), events, children, outbox)
        : await saveCheckpoint(ctx, run, next, step + 1, events, children, outbox);
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

/** Checks the identity before an outside send; an invalid one refuses the send and fails the run. */
async function checkBeforeSend(ctx: EngineContext, run: LocalRun): Promise<void> {
  const invalid = await identityFailure(ctx, run);
  if (invalid === null) return;
  run.identityInvalid ??= invalid;
  throw new IdentityInvalid(invalid);
}

function forbidden(reason: string): { category: 'forbidden'; cause: IdentityInvalid } {
  return { category: 'forbidden', cause: new IdentityInvalid(reason) };
}

/** An error PostgreSQL answered with (it carries an SQLSTATE), as opposed to a crash of this run. */
function isDatabaseRefusal(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** A child's saved end result: only children of this parent, only once completed. */
async function childResult(ctx: EngineContext, parentId: string, childId: string): Promise<Json | undefined> {
  const row = await retryStorage(() => selectExecution(ctx.pool, childId), undefined);
  if (!row || row.parent_id !== parentId || row.state !== 'completed') return undefined;
  return openData(ctx.sealed, row).result ?? null;
}

async function currentState(ctx: EngineContext, id: string): Promise<ExecutionState | null> {
  return (await selectExecution(ctx.pool, id))?.state ?? null;
}

/**
 * Delivers a stored signal to a phase running here: a cancel or a pause closes its gate (EXE-11),
 * any other signal rings the phase's inbox. The cancel
 * signal decides by its phase number (EXE-15): only the signal of the execution's latest cancel
 * request cancels; one of an older phase (replayed, restored, or never requested) is consumed
 * unused, so it can never cancel a later phase.
 */
export async function deliverSignal(ctx: EngineContext, run: LocalRun): Promise<void> {
  const { rows } = await ctx.pool.query<{ cancel: boolean; paused: boolean }>({
    name: 'engine.deliver_signal',
    text: `WITH pending AS (
             SELECT s.id, e.cancel_phase > 0 AND s.cancel_phase = e.cancel_phase AS current
               FROM execution_signals s JOIN executions e ON e.id = s.execution_id
              WHERE s.execution_id = $1 AND s.name = 'cancel' AND s.consumed_at IS NULL
           ), stale AS (
             UPDATE execution_signals SET consumed_at = now()
              WHERE id IN (SELECT id FROM pending WHERE NOT current)
           )
           SELECT coalesce((SELECT bool_or(current) FROM pending), false) AS cancel, e.paused FROM executions e WHERE e.id = $1`,
    values: [run.id],
  });
  const row = rows[0];
  if (row?.cancel === true) {
    run.scope?.closeGate('cancel');
    run.abort.abort('cancel');
  } else if (row?.paused === true) {
    // A pause stops new sends and releases the phase's resources (TASK-02): the gate closes.
    run.scope?.closeGate('pause');
    run.abort.abort('pause');
  } else {
    // Any other signal reaches the running phase through its inbox.
    run.inbox?.ring();
  }
}

export { enqueueAdvance };

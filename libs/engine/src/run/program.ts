import type { ExecutionId, ExecutionState } from '@openbot/domain';
import type { EngineContext } from './context';
import { waitSpec, type ExecutionData } from './execution-data';
import type { LocalRun, Stop } from './local-run';
import { pauseRun } from './pause';
import { runPhase, type PhaseResult } from './phase-attempt';
import { startProgram } from './program-start';
import { cancel, end } from './end';
import { saveCheckpoint, waitFor } from './run-outcomes';
import { forbidden } from './run-identity';
import type { ExecutionRow } from '../base/store';
import { isConnectionFailure, retryStorage } from '../base/storage-retry';
import { openChildren } from './transitions';
import type { Json, Phase, Workflow } from '../authoring/workflow';

export type { LocalRun };

/** Where the loop stands between phases. */
interface Position {
  data: ExecutionData;
  step: number;
  state: ExecutionState;
}

/**
 * The program loop (EXE-07, EXE-08): one loop for recovery, owner checks, cancellation and phase
 * failures. The feature supplies `next` and `end`; the loop runs the chosen phase in a RunScope,
 * closes its resources, saves its result in a fenced checkpoint, then runs its `after` work.
 *
 * Each turn of the loop: stop if asked to (`requestedStop`), ask the workflow what comes next,
 * end (after attached children, `endProgram`) or run the phase (`runPhase`, phase-attempt.ts),
 * then save its result (`savePhaseResult`).
 */
export async function runProgram(ctx: EngineContext, run: LocalRun, row: ExecutionRow): Promise<Stop> {
  const start = await startProgram(ctx, run, row);
  if (typeof start === 'string') return start;
  const { workflow } = start;
  const at: Position = { data: start.data, step: start.step, state: start.state };
  for (;;) {
    const stop = requestedStop(ctx, run, workflow, at);
    if (stop !== null) return stop;
    const decision = workflow.next(at.data.state, at.data.wake, ctx.clock);
    if ('end' in decision) {
      const ended = await endProgram(ctx, run, workflow, at, decision);
      if (ended === 'continue') continue;
      return ended;
    }
    const phase = workflow.phases[decision.phase];
    if (!phase) {
      return end(ctx, run, {
        workflow,
        data: at.data,
        outcome: 'failed',
        failure: { category: 'internal', cause: new Error(`workflow ${workflow.name} has no phase "${decision.phase}"`) },
      });
    }
    const began = performance.now();
    // The phase's span: its trace is the execution's, whichever node runs it (decision 040).
    const span = ctx.tracing.startPhase({ executionId: run.id, workflow: workflow.name, phase: decision.phase, step: at.step + 1, generation: run.generation });
    let result: Awaited<ReturnType<typeof runPhase>>;
    try {
      result = await runPhase(ctx, run, { workflow, data: at.data, step: at.step, name: decision.phase, phase, span });
    } catch (error) {
      span.end({ error: 'storage' });
      throw error;
    }
    const outcome = typeof result === 'string' ? result : 'succeeded';
    span.set({ 'openbot.phase.outcome': outcome });
    span.end();
    ctx.metrics.phaseEnded(workflow.name, outcome, (performance.now() - began) / 1000);
    if (typeof result === 'string') return result;
    const saved = await savePhaseResult(ctx, run, workflow, phase, at, result);
    if (saved !== null) return saved;
  }
}

/** A cancel, pause, loss or drain seen between phases stops the loop before the next one. */
function requestedStop(ctx: EngineContext, run: LocalRun, workflow: Workflow<Json, Json>, at: Position): Promise<Stop> | Stop | null {
  if (run.lost) return 'lost';
  if (at.state === 'cancelling' || run.abort.signal.reason === 'cancel') return cancel(ctx, run, workflow, at.data);
  if (run.abort.signal.reason === 'pause') return pauseRun(ctx, run, workflow, at.data);
  if (run.draining) return 'drained';
  return null;
}

/** The workflow chose to end: an owner first waits for its attached children (EXE-13), then ends. */
async function endProgram(
  ctx: EngineContext,
  run: LocalRun,
  workflow: Workflow<Json, Json>,
  at: Position,
  decision: Extract<ReturnType<Workflow<Json, Json>['next']>, { end: unknown }>,
): Promise<Stop | 'continue'> {
  if (at.data.spawned === true && (await retryStorage(() => openChildren(ctx.pool, run.id), undefined)) > 0) {
    const waited = await waitFor(ctx, run, at.data, at.step, { signals: [], until: null, children: true }, []);
    if (waited === 'lost' || waited === 'waiting') return waited;
    at.data = waited;
    return 'continue';
  }
  return decision.end === 'completed'
    ? end(ctx, run, { workflow, data: at.data, outcome: 'completed', result: decision.result ?? null })
    : end(ctx, run, { workflow, data: at.data, outcome: 'failed', failure: { category: decision.category ?? 'internal', cause: decision.cause } });
}

/**
 * Saves a phase's result in its fenced checkpoint (or with its wait), moves the position on, and
 * runs the phase's `after` work. Null: the loop goes on; otherwise the run's stop.
 */
async function savePhaseResult(
  ctx: EngineContext,
  run: LocalRun,
  workflow: Workflow<Json, Json>,
  phase: Phase<Json>,
  at: Position,
  { outcome, events, children, outbox }: PhaseResult,
): Promise<Stop | null> {
  // A phase that caught the refusal of its send still does not get its result saved.
  if (run.identityInvalid !== null) return end(ctx, run, { workflow, data: at.data, outcome: 'failed', failure: forbidden(run.identityInvalid) });
  const next: ExecutionData = {
    state: outcome.state,
    wake: null,
    wait: null,
    ...(at.data.spawned || children.length > 0 ? { spawned: true } : {}),
    ...(at.data.seed !== undefined ? { seed: at.data.seed } : {}),
  };
  if (!('wait' in outcome) && children.length === 0 && next.spawned !== true && phase.after === undefined && nothingAsked(run, at)) {
    // The workflow ends right after this phase: the end saves its result (end.ts, decisions 048, 056).
    const decision = workflow.next(next.state, null, ctx.clock);
    if ('end' in decision && decision.end === 'completed') {
      const lastPhase = { step: at.step + 1, events, outbox };
      const ended = await end(ctx, run, { workflow, data: next, outcome: 'completed', result: ('result' in decision ? decision.result : null) ?? null, lastPhase });
      if (ended !== null) return ended;
    }
  }
  let saved: Awaited<ReturnType<typeof saveCheckpoint>> | Awaited<ReturnType<typeof waitFor>>;
  try {
    saved = 'wait' in outcome
      ? await waitFor(ctx, run, next, at.step + 1, waitSpec(outcome.wait), events, children, outbox)
      : await saveCheckpoint(ctx, run, next, at.step + 1, events, children, outbox);
  } catch (error) {
    // The database refused the checkpoint itself (a constraint, invalid data): a failure of
    // this execution, not an outage to retry forever (CALL-07). Outages were retried above.
    if (isConnectionFailure(error) || !isDatabaseRefusal(error)) throw error;
    return end(ctx, run, { workflow, data: at.data, outcome: 'failed', failure: { category: 'internal', cause: error } });
  }
  if (saved === null || saved === 'lost') return 'lost';
  if (saved === 'waiting') {
    // The phase's result is saved with its wait: its `after` work still runs (EXE-07).
    if (phase.after) await phase.after({ executionId: run.id as ExecutionId, state: next.state });
    return 'waiting';
  }
  if (typeof saved === 'string') {
    at.data = next;
    at.state = saved;
  } else {
    at.data = saved;
    at.state = 'running';
  }
  at.step += 1;
  if (phase.after) await phase.after({ executionId: run.id as ExecutionId, state: at.data.state });
  return null;
}

/** No cancel, pause, loss or drain is pending: the loop would go on to ask the workflow what comes next. */
function nothingAsked(run: LocalRun, at: Position): boolean {
  return !run.lost && at.state !== 'cancelling' && !run.abort.signal.aborted && !run.draining;
}

/** An error PostgreSQL answered with (it carries an SQLSTATE), as opposed to a crash of this run. */
function isDatabaseRefusal(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

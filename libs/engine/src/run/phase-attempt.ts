import { newId, type ExecutionId } from '@openbot/domain';
import { namedCategory, namedDetail } from '../base/failure-facts';
import { CallFailed, CallLog, OutcomeUnknown } from '../logs/call-log';
import { seededRandom } from '../base/clock';
import { collectCommands, type OutgoingCommand, type PhaseOutbox } from './commands';
import type { EngineContext } from './context';
import { encodeEvent } from '../logs/event-log';
import { EventPublisher } from './event-publisher';
import { openData, type ExecutionData } from './execution-data';
import { assertAudience } from './identity-guard';
import { RunInbox } from './inbox';
import type { LocalRun, Stop } from './local-run';
import { pauseRun } from './pause';
import { currentState } from './program-start';
import { cancel, end } from './end';
import { outcomeUnknown } from './run-outcomes';
import { checkBeforeSend, forbidden } from './run-identity';
import { backoffMs, GateClosed, RunScope, sleep, type GateReason } from '../base/run-scope';
import type { PendingEvent } from '../base/store';
import type { TraceSpan } from '../base/tracing';
import { selectExecution } from '../sql/executions';
import { retryStorage } from '../base/storage-retry';
import { resumeUnknown } from './transitions';
import type { Json, Phase, PhaseContext, PhaseOutcome, ResourceRef, Workflow } from '../authoring/workflow';

/** A child a phase started: inserted with the phase's checkpoint. */
export interface StartedChild {
  readonly id: string;
  readonly workflow: string;
  readonly input: Json;
  readonly attached: boolean;
  readonly resource: ResourceRef | null;
  /** What the product's identity `derive` is told about this child (e.g. a delegation hop); null: nothing. */
  readonly identityHint?: Json | null;
}

/** What a phase's successful attempt leaves for its checkpoint. */
export interface PhaseResult {
  readonly outcome: PhaseOutcome<Json>;
  readonly events: readonly PendingEvent[];
  readonly children: readonly StartedChild[];
  readonly outbox: PhaseOutbox;
}

/** What one attempt collects: filled by the phase through its context, dropped when it is retried. */
interface AttemptWork {
  readonly events: PendingEvent[];
  readonly children: StartedChild[];
  readonly commands: OutgoingCommand[];
}

/** The execution, its workflow and where it stands: what every attempt of one phase shares. */
interface PhaseAt {
  readonly workflow: Workflow<Json, Json>;
  readonly data: ExecutionData;
  readonly step: number;
  readonly name: string;
  readonly phase: Phase<Json>;
  /** The phase run's span: each outside call's attempt gets a child of it (decision 040). */
  readonly span?: TraceSpan;
}

/**
 * Runs one phase to its result, retrying a failure up to the phase's `retries` with backoff.
 * Each attempt gets a fresh RunScope, inbox, call log and publisher; its scope is closed before
 * the result is handed on. A failure, a closed gate or an unknown outcome ends in the run's stop.
 */
export async function runPhase(ctx: EngineContext, run: LocalRun, at: PhaseAt): Promise<PhaseResult | Stop> {
  for (let attempt = 1; ; attempt++) {
    const work: AttemptWork = { events: [], children: [], commands: [] };
    const scope = new RunScope();
    run.scope = scope;
    if (run.abort.signal.aborted) scope.closeGate(run.abort.signal.reason as GateReason);
    const publisher = new EventPublisher(ctx, run, scope);
    const inbox = new RunInbox(ctx.pool, ctx.sealed, run.id, scope.signal, ctx.leaseSeconds * 1000);
    run.inbox = inbox;
    try {
      await ctx.faults.hit('phase.started', { executionId: run.id, step: at.step + 1 });
      const outcome = await at.phase.run(phaseContext(ctx, run, at, scope, publisher, inbox, work));
      await publisher.flush();
      await scope.close();
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows whatever the scope's close threw
      if (scope.closeFailure !== null) throw scope.closeFailure;
      run.scope = null;
      run.inbox = null;
      return { outcome, events: work.events, children: work.children, outbox: { commands: work.commands, consumed: inbox.consumed } };
    } catch (error) {
      // What the attempt published before it failed is stored before the stop's own events (an
      // `execution.outcome_unknown` after the `tool.called` it follows), not written behind them.
      await publisher.flush().catch(() => undefined);
      await scope.close();
      run.scope = null;
      run.inbox = null;
      const stop = await failedAttempt(ctx, run, at, scope, error);
      if (stop !== null) return stop;
      // A resource that would not close blocks every new send (RES-01): no attempt follows it.
      if (scope.closeFailure !== null || attempt > (at.phase.retries ?? 0)) return failedPhase(ctx, run, at, scope, error);
      const interrupted = await backoff(ctx, run, at, attempt);
      if (interrupted !== null) return interrupted;
    }
  }
}

/** The context a phase sees: its state and wake, its gate and resources, and what it may start or send. */
function phaseContext(
  ctx: EngineContext,
  run: LocalRun,
  at: PhaseAt,
  scope: RunScope,
  publisher: EventPublisher,
  inbox: RunInbox,
  work: AttemptWork,
): PhaseContext<Json> {
  const step = at.step + 1;
  // Made on first use: most phases never draw a number, and the hash is not free.
  let random: (() => number) | null = null;
  const seed = at.data.seed ?? run.id;
  return {
    executionId: run.id as ExecutionId,
    generation: run.generation,
    activity: `${at.name}#${run.generation}`,
    step,
    state: at.data.state,
    wake: at.data.wake,
    signal: scope.signal,
    resources: scope.resources,
    calls: new CallLog({
      db: ctx.pool,
      sealed: ctx.sealed,
      faults: ctx.faults,
      executionId: run.id,
      generation: run.generation,
      step,
      scope,
      failures: ctx.failures,
      ...(at.span !== undefined ? { span: at.span } : {}),
      checkIdentity: ctx.identityCheck === undefined || run.identity === null ? undefined : () => checkBeforeSend(ctx, run),
      onLateResult: (tx) => resumeUnknown(ctx, tx, run.id).then(() => undefined),
    }),
    publisher,
    clock: ctx.clock,
    random: () => (random ??= seededRandom(seed, step))(),
    childResult: (childId) => childResult(ctx, run.id, childId),
    emit: (type, payload, position) => work.events.push(encodeEvent(ctx.sealed, run.id, type, payload ?? null, position)),
    startChild: (child) => {
      const childWorkflow = ctx.workflows.get(child.workflow);
      if (childWorkflow) assertAudience(childWorkflow, run.scopeKind);
      const id = newId<ExecutionId>();
      work.children.push({ id, workflow: child.workflow, input: child.input, attached: child.attached ?? true, resource: child.resource ?? null, identityHint: child.identityHint ?? null });
      return id;
    },
    inbox,
    commands: collectCommands(work.commands),
  };
}

/**
 * The stops a failed attempt leads to whatever its retries: a lost lease, a cancel, a drain or a
 * pause that closed the gate, an unknown outcome, or an identity found invalid (IDN-06: not
 * retried, it will not become valid by waiting). Null: an ordinary failure, retried or final.
 */
async function failedAttempt(ctx: EngineContext, run: LocalRun, at: PhaseAt, scope: RunScope, error: unknown): Promise<Stop | null> {
  const reason = error instanceof GateClosed ? error.reason : scope.gateClosed ? (scope.signal.reason as string) : null;
  if (run.lost || reason === 'lease-lost') return 'lost';
  if (reason === 'cancel') return cancel(ctx, run, at.workflow, at.data);
  if (reason === 'shutdown') return 'drained';
  if (reason === 'pause') return pauseRun(ctx, run, at.workflow, at.data);
  if (error instanceof OutcomeUnknown) return outcomeUnknown(ctx, run, at.data, at.step);
  if (run.identityInvalid !== null) {
    return end(ctx, run, { workflow: at.workflow, data: at.data, outcome: 'failed', failure: { ...forbidden(run.identityInvalid), later: scope.releaseFailures } });
  }
  return null;
}

/** A failure with no retries left ends the execution. */
function failedPhase(ctx: EngineContext, run: LocalRun, at: PhaseAt, scope: RunScope, error: unknown): Promise<Stop> {
  // The first failure is the execution's; releases that failed after it get records of their own (ERR-04).
  const later = scope.releaseFailures.filter((f) => f !== error);
  // A call that failed for good has its error record already: the execution ends with its ID (ERR-01).
  const errorId = error instanceof CallFailed && error.errorId !== null ? { errorId: error.errorId } : {};
  // A failure that names its category and a safe detail (a model provider's refusal) ends with them (decision 082).
  const detail = namedDetail(error);
  return end(ctx, run, {
    workflow: at.workflow,
    data: at.data,
    outcome: 'failed',
    failure: { category: namedCategory(error) ?? 'internal', cause: error, ...errorId, ...(detail !== null ? { detail } : {}), later },
  });
}

/** Waits before the next attempt; a cancel, pause, drain or lost lease during the wait stops the run. */
async function backoff(ctx: EngineContext, run: LocalRun, at: PhaseAt, attempt: number): Promise<Stop | null> {
  try {
    await sleep(backoffMs(attempt), run.abort.signal);
    return null;
  } catch {
    if (run.lost || run.abort.signal.reason === 'lease-lost') return 'lost';
    if (run.abort.signal.reason === 'pause') return pauseRun(ctx, run, at.workflow, at.data);
    return run.abort.signal.reason === 'cancel' || (await currentState(ctx, run.id)) === 'cancelling' ? cancel(ctx, run, at.workflow, at.data) : 'drained';
  }
}

/** A child's saved end result: only children of this parent, only once completed. */
async function childResult(ctx: EngineContext, parentId: string, childId: string): Promise<Json | undefined> {
  const row = await retryStorage(() => selectExecution(ctx.pool, childId), undefined);
  if (!row || row.parent_id !== parentId || row.state !== 'completed') return undefined;
  return openData(ctx.sealed, row).result ?? null;
}

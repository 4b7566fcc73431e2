/**
 * How an execution ends: the one entry `end`, used by the run loop (its completed or failed end,
 * and the end that saves the last phase's result) and by callers that end an execution inside
 * their own transaction (a cancel, an operator's decision). The mode is chosen in one place
 * (`modeOf`): one statement for a plain end, a transaction otherwise. The storage steps of both
 * stay private to this file.
 */
import { newId, type ErrorCategory, type ExecutionId } from '@openbot/domain';
import type { EngineContext } from './context';
import { encodeEvent, ENDED_EVENT, toExecutionEvent, type ExecutionEvent } from '../logs/event-log';
import type { PendingEvent } from '../base/store';
import { CorruptExecutionData, sealData, type ExecutionData } from './execution-data';
import { insertQueued } from './new-execution';
import type { Queryable } from '../base/ports';
import { enqueueAdvance } from '../base/queue';
import { AfterCommit, applyCommands, cancelIn, identityToContinue, isEmptyOutbox, signalIn, type PhaseOutbox } from './commands';
import { consumeRead } from './inbox';
import { appendEvents, appendStoredEvents } from '../sql/events';
import { takeWaiters } from './waits';
import { cascadeCancel, lockOpenChildren, wakeIfWaiting } from './transitions';
import type { EndTransaction, Json, Workflow } from '../authoring/workflow';
import { announceEvents, announceStored, SIGNALS_CHANNEL } from '../logs/node-listener';
import { retryStorage } from '../base/storage-retry';
import { withTransaction } from '../base/tx';
import { selectExecution } from '../sql/executions';
import type { LocalRun, Stop } from './local-run';
import * as childSql from '../sql/children';
import * as executionSql from '../sql/executions';
import * as signalSql from '../sql/signals';
import { runStatement } from '../sql/statement';

type FinalState = 'completed' | 'failed' | 'cancelled' | 'interrupted';

/** Why an execution fails. `later`: failures after the first one (a release that failed afterwards), recorded apart (ERR-04). */
export interface EndFailure {
  readonly category: ErrorCategory;
  readonly cause: unknown;
  readonly errorId?: string;
  /** What the failure says of itself that is safe to show (a model provider's scrubbed answer, decision 082): on `execution.ended` and its error record. */
  readonly detail?: { readonly [key: string]: Json };
  readonly later?: readonly unknown[];
}

/** The last phase's result, as its checkpoint would have saved it. */
export interface LastPhase {
  readonly step: number;
  readonly events: readonly PendingEvent[];
  readonly outbox: PhaseOutbox;
}

/** The run loop's end: completed with its result, or failed with its failure. It commits on its own. */
export type RunEnd =
  | { readonly workflow: Workflow<Json, Json> | undefined; readonly data: ExecutionData; readonly outcome: 'completed'; readonly result?: Json }
  | { readonly workflow: Workflow<Json, Json> | undefined; readonly data: ExecutionData; readonly outcome: 'failed'; readonly failure: EndFailure };

/**
 * A completed end right after a phase that also saves that phase's result, in one commit instead
 * of the phase's checkpoint and then the end (decisions 048, 056).
 */
export interface EndAfterPhase {
  readonly workflow: Workflow<Json, Json>;
  readonly data: ExecutionData;
  readonly outcome: 'completed';
  readonly result: Json;
  readonly lastPhase: LastPhase;
}

/** An end inside the caller's transaction (a cancel, an operator's decision): the caller commits. */
export interface EndInTransaction {
  readonly tx: Queryable;
  readonly workflow: Workflow<Json, Json> | undefined;
  readonly data: ExecutionData;
  readonly outcome: FinalState;
  readonly result?: Json;
  readonly failure?: EndFailure;
  /** Collects the executions the end admitted or submitted: the caller runs them after commit. */
  readonly admitted?: string[];
  /** Collects the running executions the end signalled or cancelled: the caller tells their owners after commit. */
  readonly notify?: string[];
}

/**
 * How an end is written:
 * - `statement`: one statement (`engine.end_fast`), for a plain end: no failure, no end work or
 *   end facts; after a phase, also a plain phase (no events, commands or reads), whose step the
 *   statement writes under the checkpoint's fence (decision 056);
 * - `transaction`: the fenced end update, the end work, the notices and `execution.ended` in one
 *   transaction (STC-01); after a phase, with what its checkpoint would have written (decision 048).
 */
type EndMode = 'statement' | 'transaction';

/**
 * The one place the mode is chosen. Null: a last phase whose events go in its own checkpoint
 * first, so there is no end that saves it.
 */
function modeOf(request: RunEnd): EndMode;
function modeOf(request: EndAfterPhase): EndMode | null;
function modeOf(request: RunEnd | EndAfterPhase): EndMode | null {
  if ('lastPhase' in request) {
    const { workflow, lastPhase: phase } = request;
    if (workflow.end !== undefined || workflow.endedFacts !== undefined || !isEmptyOutbox(phase.outbox)) return 'transaction';
    return phase.events.length === 0 ? 'statement' : null;
  }
  const { workflow } = request;
  return request.outcome !== 'failed' && !workflow?.end && !workflow?.endedFacts ? 'statement' : 'transaction';
}

/**
 * Ends an execution. Three forms:
 * - the run loop's end (`RunEnd`): answers its stop; a late cancel wins over completing (EXE-12),
 *   failed end work fails the execution with its cause (ERR-01), a moved row is lost;
 * - the end that saves the last phase (`EndAfterPhase`): null when it did not end (a cancel, a
 *   takeover, a parent or a waiter moved the row on, or the end work failed, or the phase is not
 *   one an end saves). Nothing was written then: the caller saves the checkpoint and lets the loop
 *   decide;
 * - an end inside the caller's transaction (`EndInTransaction`): false when the generation moved
 *   on (EXE-04).
 */
export function end(ctx: EngineContext, run: LocalRun, request: RunEnd): Promise<Stop>;
export function end(ctx: EngineContext, run: LocalRun, request: EndAfterPhase): Promise<Stop | null>;
export function end(ctx: EngineContext, execution: { readonly id: string; readonly generation: number }, request: EndInTransaction): Promise<boolean>;
export async function end(
  ctx: EngineContext,
  run: LocalRun | { readonly id: string; readonly generation: number },
  request: RunEnd | EndAfterPhase | EndInTransaction,
): Promise<Stop | null | boolean> {
  if ('tx' in request) {
    const { tx, ...rest } = request;
    return endExecution(ctx, tx, { id: run.id, generation: run.generation, ...rest });
  }
  if ('lastPhase' in request) {
    const mode = modeOf(request);
    return mode === null ? null : endWithLastPhase(ctx, run as LocalRun, request, mode);
  }
  return finish(ctx, run as LocalRun, request, modeOf(request));
}

/** The run loop's end, in `mode` first; the transaction when the statement did not apply. */
async function finish(ctx: EngineContext, run: LocalRun, request: RunEnd, mode: EndMode): Promise<Stop> {
  const { workflow, data, outcome } = request;
  const result = request.outcome === 'completed' ? request.result : undefined;
  const failure = request.outcome === 'failed' ? request.failure : undefined;
  const collected = new EndCollected();
  const { stored } = collected;
  let ended = false;
  // False once the feature's end work failed and the execution ended failed instead.
  let completed = outcome === 'completed';
  if (mode === 'statement') {
    const endedEvent = await retryStorage(() => endWithoutSideEffects(ctx, ctx.pool, { id: run.id, generation: run.generation, data, outcome, result }), undefined);
    ended = endedEvent !== null;
    // The transactional path below counts in endExecution.
    if (endedEvent !== null) {
      stored.push(endedEvent);
      ctx.metrics.executionEnded(workflow?.name ?? 'unknown', outcome);
    }
  }
  if (!ended) {
    try {
      ended = await retryStorage(
        () =>
          withTransaction(ctx.pool, (tx) => {
            collected.clear();
            return endExecution(ctx, tx, { id: run.id, generation: run.generation, workflow, data, outcome, result, failure, ...collected });
          }),
        undefined,
      );
    } catch (error) {
      if (error instanceof CorruptExecutionData || outcome !== 'completed') throw error;
      // Nothing of the rolled-back end is handed to readers.
      collected.clear();
      completed = false;
      // The feature's end work failed: the execution fails with its own sealed cause (ERR-01). The
      // feature's end runs again for that failed outcome, as after a failed phase, so it still
      // releases what the execution holds (a pending send, the cleanups its end admits: GRANT-02,
      // GRANT-03); only when that fails too does it end without the feature's end.
      const endFailed = (withFeature: boolean): Promise<boolean> =>
        retryStorage(
          () =>
            withTransaction(ctx.pool, (tx) => {
              collected.clear();
              const failure: EndFailure = { category: 'internal', cause: error };
              return withFeature
                ? endExecution(ctx, tx, { id: run.id, generation: run.generation, workflow, data, outcome: 'failed', failure, ...collected })
                : endExecution(ctx, tx, { id: run.id, generation: run.generation, workflow: undefined, data, outcome: 'failed', failure });
            }),
          undefined,
        );
      ended = await endFailed(true).catch((again: unknown) => {
        if (again instanceof CorruptExecutionData) throw again;
        collected.clear();
        return endFailed(false);
      });
    }
  }
  if (!ended) {
    // A cancel that arrived after the last checkpoint wins over completing (EXE-12).
    const row = await retryStorage(() => selectExecution(ctx.pool, run.id), undefined);
    if (row && row.generation === run.generation && row.state === 'cancelling') return cancel(ctx, run, workflow, data);
    run.lost = true;
    return 'lost';
  }
  if (completed) ctx.recentResults.completed(run.id, result ?? null);
  announceEnd(ctx, run.id, collected);
  return 'ended';
}

/**
 * A completed end that also saves the last phase's result, in one commit instead of the phase's
 * checkpoint and then the end; `mode` says how. The checkpoint's fault points are kept around it.
 * Null when it did not end; nothing was written then (EXE-12, ERR-01).
 */
async function endWithLastPhase(ctx: EngineContext, run: LocalRun, request: EndAfterPhase, mode: EndMode): Promise<Stop | null> {
  const { workflow, data, result, lastPhase: phase } = request;
  await ctx.faults.hit('checkpoint.before-commit', { executionId: run.id, step: phase.step });
  const collected = new EndCollected();
  const after = new AfterCommit();
  const ended =
    mode === 'statement' ? await endPhaseInStatement(ctx, run, data, result, phase, collected) : await endPhaseInTransaction(ctx, run, workflow, data, result, phase, collected, after);
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
async function endPhaseInStatement(ctx: EngineContext, run: LocalRun, data: ExecutionData, result: Json, phase: LastPhase, collected: EndCollected): Promise<boolean> {
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
async function endPhaseInTransaction(
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

/**
 * Cancel (EXE-11, EXE-13): the phase gate is already closed and its resources released;
 * attached children are cancelled too and waited for; then the execution ends `cancelled`.
 */
export async function cancel(ctx: EngineContext, run: LocalRun, workflow: Workflow<Json, Json> | undefined, data: ExecutionData): Promise<Stop> {
  const admitted: string[] = [];
  const notify: string[] = [];
  const outcome = await retryStorage(
    () =>
      withTransaction(ctx.pool, async (tx) => {
        // The children first, then the own row: the order their ends lock the two in.
        const open = await lockOpenChildren(tx, run.id);
        const row = await selectExecution(tx, run.id, true);
        if (!row || row.generation !== run.generation) return 'lost' as const;
        await tx.query({
          ...signalSql.consumeCancel,
          values: [run.id],
        });
        const cancelled = await cascadeCancel(ctx, tx, run.id);
        if (open > 0 || cancelled.length > 0) {
          const next: ExecutionData = { ...data, wait: { signals: [], until: null, children: true } };
          const sealed = sealData(ctx.sealed, run.id, next);
          await tx.query({
            ...executionSql.cancelWait,
            values: [run.id, sealed.keyId, sealed.data],
          });
          return { waiting: cancelled };
        }
        admitted.length = 0;
        notify.length = 0;
        const ended = await end(ctx, run, { tx, workflow, data, outcome: 'cancelled', admitted, notify });
        return ended ? 'ended' : ('lost' as const);
      }),
    undefined,
  );
  if (outcome === 'lost') {
    run.lost = true;
    return 'lost';
  }
  announceEvents(ctx, run.id);
  if (outcome === 'ended') {
    for (const id of notify) ctx.notifier.notify(SIGNALS_CHANNEL, id);
    for (const id of admitted) ctx.advanceHere(id);
    return 'ended';
  }
  for (const child of outcome.waiting) ctx.notifier.notify(SIGNALS_CHANNEL, child);
  return 'waiting';
}

/** What an end's transaction collects for after its commit (see `endExecution`); cleared when a retry starts it again. */
class EndCollected {
  readonly admitted: string[] = [];
  readonly notify: string[] = [];
  readonly stored: ExecutionEvent[] = [];

  clear(): void {
    this.admitted.length = 0;
    this.notify.length = 0;
    this.stored.length = 0;
  }
}

/** After an end committed: its events to readers, its signals and admitted work to their owners. */
function announceEnd(ctx: EngineContext, executionId: string, collected: EndCollected): void {
  if (collected.stored.length > 0) {
    // This node's readers get the end from memory, as they got the phase's events; others hear by NOTIFY.
    announceStored(ctx, executionId, collected.stored);
  } else announceEvents(ctx, executionId);
  for (const id of collected.notify) ctx.notifier.notify(SIGNALS_CHANNEL, id);
  for (const id of collected.admitted) ctx.advanceHere(id);
}

/**
 * Ends an execution in one transaction (STC-01, EXE-14): the final state, the failure's sealed
 * cause, the `execution.ended` event, the feature's end rows, and the notice to a parent (which
 * is woken in the same transaction). Answers false when the generation moved on (EXE-04).
 */
async function endExecution(
  ctx: EngineContext,
  tx: Queryable,
  e: {
    id: string;
    generation: number;
    workflow: Workflow<Json, Json> | undefined;
    data: ExecutionData;
    outcome: FinalState;
    result?: Json;
    /** `later`: failures after the first one (a release that failed afterwards), recorded apart (ERR-04). */
    failure?: EndFailure;
    /** Collects the executions the end admitted or submitted: the caller runs them here after commit. */
    admitted?: string[];
    /** Collects the running executions the end signalled or cancelled: the caller tells their owners after commit. */
    notify?: string[];
    /** Collects the events the end stored (its own, then `execution.ended`): the caller hands them to this node's readers after commit. */
    stored?: ExecutionEvent[];
    /**
     * The last phase's result, saved by the end itself (endWithLastPhase): its step, and what its
     * checkpoint would have written, applied once the fenced update found the row.
     */
    phase?: { readonly step: number; readonly save: (tx: Queryable) => Promise<void> };
  },
): Promise<boolean> {
  const errorId = e.failure ? (e.failure.errorId ?? newId()) : null;
  const sealedData = sealData(ctx.sealed, e.id, { ...e.data, wait: null, result: e.result ?? null });
  const { rows } = await tx.query<{ parent_id: string | null; awaited: boolean }>({
    ...executionSql.end,
    values: [e.id, e.generation, e.outcome, sealedData.keyId, sealedData.data, errorId, e.failure?.category ?? null, e.phase?.step ?? null],
  });
  const row = rows[0];
  if (!row) return false;
  if (e.phase) await e.phase.save(tx);
  ctx.metrics.executionEnded(e.workflow?.name ?? 'unknown', e.outcome);
  if (e.failure && errorId !== null && e.failure.errorId === undefined) {
    await ctx.failures.record(tx, {
      errorId: errorId as never,
      category: e.failure.category,
      origin: `execution ${e.workflow?.name ?? 'unknown'}`,
      cause: e.failure.cause,
      executionId: e.id,
      ...(e.failure.detail !== undefined ? { detail: e.failure.detail } : {}),
    });
  }
  for (const cause of e.failure?.later ?? []) {
    // Its own sealed cause and error ID, linked to the execution; the execution keeps its first failure.
    await ctx.failures.record(tx, { errorId: newId(), category: 'internal', origin: `release ${e.workflow?.name ?? 'unknown'}`, cause, executionId: e.id });
  }
  const facts = e.workflow?.endedFacts?.({ state: e.data.state, outcome: e.outcome, result: e.result ?? null }) ?? {};
  const detail = e.failure?.detail;
  const payload: Json = { ...facts, state: e.outcome, ...(errorId !== null ? { errorId, category: e.failure!.category, ...(detail !== undefined ? { detail } : {}) } : {}) };
  // Events the feature's end emits go just before `execution.ended`, in the same transaction.
  const endEvents: PendingEvent[] = [];
  const endPayloads: Json[] = [];
  if (e.workflow?.end) {
    const endTx: EndTransaction = {
      query: async (sql, params) => {
        const r = await runStatement(tx, sql, params ?? []);
        return { rows: r.rows as Array<Record<string, unknown>>, rowCount: r.rowCount };
      },
    };
    await e.workflow.end({
      executionId: e.id as never,
      state: e.data.state,
      outcome: e.outcome,
      tx: endTx,
      admit: async (id) => {
        await enqueueAdvance(ctx.boss, tx, id);
        e.admitted?.push(id);
      },
      submit: async (command) => {
        const id = newId<ExecutionId>();
        // Work that continues this execution acts with its identity unless told otherwise (IDN-01).
        const identity = command.identity ?? (await identityToContinue(ctx, tx, e.id));
        await insertQueued(ctx, tx, id, { ...command, identity }, true);
        e.admitted?.push(id);
        return id;
      },
      signal: async (id, name, payload) => {
        const sent = await signalIn(ctx, tx, id, name, payload ?? null);
        if (sent === 'woken') e.admitted?.push(id);
        else if (sent === 'stored') e.notify?.push(id);
        return sent !== null;
      },
      cancel: async (id) => {
        const requested = await cancelIn(ctx, tx, id);
        if (requested?.state === 'cancelling') e.notify?.push(id);
        if (requested?.wake === true) e.admitted?.push(id);
      },
      emit: (type, eventPayload) => {
        endEvents.push(encodeEvent(ctx.sealed, e.id, type, eventPayload));
        endPayloads.push(eventPayload ?? null);
      },
    });
  }
  const appended = [...endEvents, encodeEvent(ctx.sealed, e.id, ENDED_EVENT, payload)];
  const stored = await appendStoredEvents(tx, e.id, appended);
  if (stored !== null && e.stored !== undefined) {
    const first = stored.lastSeq - appended.length + 1;
    const payloads = [...endPayloads, payload];
    e.stored.push(...appended.map((event, i) => toExecutionEvent(first + i, event.type, stored.at, event.step, event.attempt, payloads[i]!)));
  }
  if (row.awaited) {
    // Executions that wait for this one's end wake in this transaction, like a parent (EXE-14).
    for (const waiter of await takeWaiters(tx, e.id)) await wakeIfWaiting(ctx, tx, waiter);
  }
  if (row.parent_id !== null) {
    await tx.query({
      ...childSql.childNotice,
      values: [row.parent_id, e.id, e.outcome],
    });
    await wakeIfWaiting(ctx, tx, row.parent_id);
  }
  return true;
}

/**
 * The common end as one statement (no parent, no failure, no feature end work, no waiter): final state,
 * sealed data and `execution.ended` commit together. Answers the stored `execution.ended` (for this
 * node's readers), or null when it does not apply or the generation moved on; the caller then takes
 * the transactional path, which tells the two apart. With `step`, it also saves the result of the
 * phase that ends the execution, fenced like that phase's checkpoint (decision 056).
 */
async function endWithoutSideEffects(
  ctx: EngineContext,
  db: Queryable,
  e: { id: string; generation: number; data: ExecutionData; outcome: FinalState; result?: Json; step?: number },
): Promise<ExecutionEvent | null> {
  const sealedData = sealData(ctx.sealed, e.id, { ...e.data, wait: null, result: e.result ?? null });
  const payload = { state: e.outcome };
  const event = encodeEvent(ctx.sealed, e.id, ENDED_EVENT, payload);
  const { rows } = await db.query<{ seq: number; at: Date }>({
    ...executionSql.endFast,
    values: [e.id, e.generation, e.outcome, sealedData.keyId, sealedData.data, event.type, event.keyId, event.data, e.step ?? null],
  });
  const row = rows[0];
  return row === undefined ? null : toExecutionEvent(row.seq, ENDED_EVENT, row.at, null, null, payload);
}

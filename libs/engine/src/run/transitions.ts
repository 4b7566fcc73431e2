import { newId, type ErrorCategory, type ExecutionId } from '@openbot/domain';
import type { EngineContext } from './context';
import { encodeEvent, ENDED_EVENT, toExecutionEvent, type ExecutionEvent } from '../logs/event-log';
import type { PendingEvent } from '../base/store';
import { sealData, type ExecutionData } from './execution-data';
import { insertQueued } from './new-execution';
import type { Queryable } from '../base/ports';
import { enqueueAdvance } from '../base/queue';
import { aad } from '../base/sealed-json';
import { cancelIn, identityToContinue, signalIn } from './commands';
import { appendStoredEvents } from '../sql/events';
import { endedExecutions, forgetAwaits, takeWaiters } from './waits';
import type { EndTransaction, Json, Wake, Workflow } from '../authoring/workflow';
import * as childSql from '../sql/children';
import * as executionSql from '../sql/executions';
import * as signalSql from '../sql/signals';
import * as timerSql from '../sql/timers';
import { runStatement } from '../sql/statement';

type FinalState = 'completed' | 'failed' | 'cancelled' | 'interrupted';

/**
 * Checks, under the row lock, whether a wait is already satisfied: saved signals (even ones
 * committed before the waiter saved its state), a due timer, or all attached children ended.
 * Consumes what it uses. Answers null when the execution must keep waiting.
 */
export async function evaluateWait(
  ctx: EngineContext,
  tx: Queryable,
  executionId: string,
  wait: NonNullable<ExecutionData['wait']>,
  /** The awaited executions that have not ended (from `awaitExecutions`, run before the row lock). */
  openAwaited: readonly string[] = [],
): Promise<Wake | null> {
  const signals: Array<{ name: string; payload: Json }> = [];
  if (wait.signals.length > 0) {
    const { rows } = await tx.query<{ id: string; name: string; key_id: string | null; data: Buffer | null }>({
      ...signalSql.consumeSignals,
      values: [executionId, wait.signals],
    });
    for (const row of rows) {
      const payload = row.key_id !== null && row.data !== null ? ctx.sealed.open(row.key_id, row.data, aad.signal(row.id)) : null;
      signals.push({ name: row.name, payload });
    }
  }
  let timer = false;
  if (wait.until !== null) {
    const { rows } = await tx.query<{ due: boolean }>({ ...timerSql.timerDue, values: [wait.until] });
    timer = rows[0]?.due ?? false;
  }
  let childrenDone = false;
  let children: Wake['children'] = [];
  if (wait.children && (await openChildren(tx, executionId)) === 0) {
    childrenDone = true;
    const { rows } = await tx.query<{ child_id: string; state: string }>({
      ...childSql.consumeNotices,
      values: [executionId],
    });
    children = rows.map((r) => ({ childId: r.child_id as Wake['children'][number]['childId'], state: r.state }));
  }
  const awaited = wait.executions ?? [];
  const executionsDone = awaited.length > 0 && openAwaited.length === 0;
  if (signals.length === 0 && !timer && !childrenDone && !executionsDone) return null;
  if (awaited.length > 0 && !executionsDone) await forgetAwaits(tx, executionId);
  if (wait.until !== null) {
    // The wait is over, whatever woke it: its timer fires now or is retired (a stale timer would claim a later wait).
    await tx.query({
      ...timerSql.endWaitTimers,
      values: [executionId],
    });
  }
  return { signals, timer, children, ...(awaited.length > 0 ? { executions: executionsDone ? await endedExecutions(tx, awaited) : [] } : {}) };
}

/**
 * Whether a waiting execution's timer is due (its timer job then claims it, EXE-12). A job that
 * arrives before the due time, by the database's clock, is enqueued again for the rest.
 */
export async function timerDue(ctx: EngineContext, tx: Queryable, executionId: string): Promise<boolean> {
  const { rows } = await tx.query<{ seconds: number | null }>({
    ...timerSql.nextTimer,
    values: [executionId],
  });
  const seconds = rows[0]?.seconds ?? null;
  if (seconds === null) return false;
  if (seconds > 0) {
    await enqueueAdvance(ctx.boss, tx, executionId, seconds);
    return false;
  }
  return true;
}

/** Attached children that have not ended (an owner waits for them before it ends, EXE-13). */
export async function openChildren(tx: Queryable, executionId: string): Promise<number> {
  const { rows } = await tx.query<{ n: number }>({
    ...childSql.openChildren,
    values: [executionId],
  });
  return rows[0]?.n ?? 0;
}

/**
 * Locks an execution's open attached children before its own row is locked, and answers how many
 * there are: a child's end locks its own row and then its parent's (the notice, the wake-up), so
 * a parent that took its own row first and then its children could meet it in a lock cycle.
 * Locked, none of them can end before the caller commits.
 */
export async function lockOpenChildren(tx: Queryable, executionId: string): Promise<number> {
  const { rowCount } = await tx.query({
    ...childSql.lockOpenChildren,
    values: [executionId],
  });
  return rowCount ?? 0;
}


/**
 * Ends an execution in one transaction (STC-01, EXE-14): the final state, the failure's sealed
 * cause, the `execution.ended` event, the feature's end rows, and the notice to a parent (which
 * is woken in the same transaction). Answers false when the generation moved on (EXE-04).
 */
export async function endExecution(
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
    failure?: { category: ErrorCategory; cause: unknown; errorId?: string; later?: readonly unknown[] };
    /** Collects the executions the end admitted or submitted: the caller runs them here after commit. */
    admitted?: string[];
    /** Collects the running executions the end signalled or cancelled: the caller tells their owners after commit. */
    notify?: string[];
    /** Collects the events the end stored (its own, then `execution.ended`): the caller hands them to this node's readers after commit. */
    stored?: ExecutionEvent[];
    /**
     * The last phase's result, saved by the end itself (phase-end.ts): its step, and what its
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
    });
  }
  for (const cause of e.failure?.later ?? []) {
    // Its own sealed cause and error ID, linked to the execution; the execution keeps its first failure.
    await ctx.failures.record(tx, { errorId: newId(), category: 'internal', origin: `release ${e.workflow?.name ?? 'unknown'}`, cause, executionId: e.id });
  }
  const facts = e.workflow?.endedFacts?.({ state: e.data.state, outcome: e.outcome, result: e.result ?? null }) ?? {};
  const payload: Json = { ...facts, state: e.outcome, ...(errorId !== null ? { errorId, category: e.failure!.category } : {}) };
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
export async function endWithoutSideEffects(
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

/**
 * A result saved for an unknown write ends the outcome_unknown wait (EXE-12, CALL-03): once no
 * call of the execution is unknown any more, it is queued again and reuses the saved result.
 */
export async function resumeUnknown(ctx: EngineContext, tx: Queryable, executionId: string): Promise<boolean> {
  const { rows } = await tx.query({
    ...executionSql.resumeUnknown,
    values: [executionId],
  });
  if (rows.length === 0) return false;
  await enqueueAdvance(ctx.boss, tx, executionId);
  return true;
}

/**
 * A waiting execution becomes queued and gets an advance job, in the caller's transaction; so
 * does a cancelling one that no owner holds (it waits for its attached children, EXE-13).
 */
export async function wakeIfWaiting(ctx: EngineContext, tx: Queryable, executionId: string): Promise<boolean> {
  const { rows } = await tx.query({
    ...childSql.wakeParent,
    values: [executionId],
  });
  if (rows.length === 0) return false;
  await enqueueAdvance(ctx.boss, tx, executionId);
  return true;
}

/** Cancel reaches attached children: each enters cancelling with its own cancel phase (EXE-13, EXE-15). */
export async function cascadeCancel(ctx: EngineContext, tx: Queryable, parentId: string): Promise<string[]> {
  const { rows } = await tx.query<{ id: string; cancel_phase: number; was: string }>({
    ...childSql.cascadeCancel,
    values: [parentId],
  });
  for (const child of rows) {
    await tx.query({
      ...signalSql.insertCancelSignal,
      values: [child.id, child.cancel_phase],
    });
    if (child.was !== 'running') await enqueueAdvance(ctx.boss, tx, child.id);
  }
  return rows.map((r) => r.id);
}


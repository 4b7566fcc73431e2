import type { EngineContext } from './context';
import type { ExecutionData } from './execution-data';
import type { Queryable } from '../base/ports';
import { enqueueAdvance } from '../base/queue';
import { aad } from '../base/sealed-json';
import { endedExecutions, forgetAwaits } from './waits';
import type { Json, Wake } from '../authoring/workflow';
import * as childSql from '../sql/children';
import * as executionSql from '../sql/executions';
import * as signalSql from '../sql/signals';
import * as timerSql from '../sql/timers';

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


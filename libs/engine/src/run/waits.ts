import type { ExecutionId } from '@openbot/domain';
import type { Queryable } from '../base/ports';
import * as awaitSql from '../sql/awaits';

/**
 * Waiting for another execution's end (not a child's): no polling, no lost wake-up.
 *
 * The waiter marks each awaited execution (`awaited`) and stores an `execution_awaits` row, in
 * the transaction that saves its waiting state, and it locks the awaited rows (in ID order)
 * BEFORE its own row. An end updates the ending row first and wakes its waiters after, so both
 * sides take the locks in the same order (awaited, then waiter) and cannot deadlock:
 * - the waiter marked first: the end waits for that commit, sees `awaited` and the await row,
 *   and wakes the waiter in its own end transaction (EXE-14);
 * - the end committed first: the waiter's mark skips the final row and its next read sees the
 *   final state, so the wait is satisfied at once.
 * The one-statement end (`endWithoutSideEffects`) only applies to rows nobody awaits.
 */

/**
 * Marks and records the awaited executions that have not ended; answers those (empty: every one
 * has ended, or does not exist). Runs before the waiter locks its own row (see above).
 */
export async function awaitExecutions(tx: Queryable, waiterId: string, targets: readonly string[]): Promise<string[]> {
  const { rows } = await tx.query<{ id: string }>({
    ...awaitSql.awaitExecutions,
    values: [[...targets], waiterId],
  });
  return rows.map((r) => r.id);
}

/** The final states of awaited executions that ended (read once all of them have). */
export async function endedExecutions(tx: Queryable, targets: readonly string[]): Promise<Array<{ executionId: ExecutionId; state: string }>> {
  const { rows } = await tx.query<{ id: string; state: string }>({
    ...awaitSql.awaitedStates,
    values: [[...targets]],
  });
  const states = new Map(rows.map((r) => [r.id, r.state]));
  return targets.filter((id) => states.has(id)).map((id) => ({ executionId: id as ExecutionId, state: states.get(id)! }));
}

/** The wait ended another way (a signal, a timer): its await rows would only cause spurious wake-ups. */
export async function forgetAwaits(tx: Queryable, waiterId: string): Promise<void> {
  await tx.query({ ...awaitSql.forgetAwaits, values: [waiterId] });
}

/** In an awaited execution's end transaction: its waiters, whose await rows are removed (the caller wakes them). */
export async function takeWaiters(tx: Queryable, targetId: string): Promise<string[]> {
  const { rows } = await tx.query<{ waiter_id: string }>({
    ...awaitSql.takeWaiters,
    values: [targetId],
  });
  return rows.map((r) => r.waiter_id).sort();
}

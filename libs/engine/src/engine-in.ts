import { newId, type ExecutionId, type ExecutionState } from '@openbot/domain';
import { cancelIn, signalIn } from './commands';
import type { EngineContext } from './context';
import type { SignalSender } from './define-workflow';
import { newExecutionRow, type NewExecutionCommand } from './new-execution';
import { SIGNALS_CHANNEL } from './node-listener';
import { pauseIn, resumeIn } from './pause';
import { buildAdvanceJob } from './queue';
import { insertExecution, insertExecutionWithJob } from './sql/executions';
import type { ExecutionRow, NewExecution } from './store';
import type { Transaction } from './tx';
import type { Json } from './workflow';

/**
 * The engine inside a caller's transaction (STC-01; docs/decisions/077-transaction-scoped-engine-handle.md):
 * what it writes commits with the caller's rows or not at all, and what must follow the COMMIT
 * (run a submitted execution on this node, wake or tell a signalled one's owner) is handed to the
 * transaction, which does it once committed and drops it on rollback. Nothing is left for the
 * caller to remember. Get one with `engine.in(tx)`; signal through the workflow's definition
 * (`TURN.signal(engine.in(tx), id, 'approval', payload)`).
 */
export interface EngineInTransaction extends SignalSender<Promise<boolean>> {
  /**
   * Submits an execution (a scope the workflow does not admit is Forbidden, IDN-11; `identity`
   * is stored sealed, IDN-01). This node owns it and runs it once the transaction committed;
   * `held`: it waits in `queued` with no job until an end admits it (STC-04). Answers as soon as
   * the insert is sent: COMMIT goes right behind it, and its failure fails the transaction.
   */
  submit(command: NewExecutionCommand, options?: { readonly held?: boolean }): Promise<ExecutionId>;
  /**
   * Stores a signal (`cancel` is not a signal name) and wakes its execution if it waits (no lost
   * wake-up: a signal saved before the waiter saved its waiting state is found by the waiter's own
   * check under the same row lock). False when the execution does not exist or has ended.
   */
  signal(executionId: string, name: string, payload?: Json): Promise<boolean>;
  /** A cancel request (EXE-12, EXE-15); on a final execution it changes nothing. Null when there is none. */
  cancel(executionId: string): Promise<{ readonly state: ExecutionState } | null>;
  /** Pauses an execution (TASK-02); `paused` is false when it has ended or is being cancelled. */
  pause(executionId: string): Promise<{ readonly state: ExecutionState; readonly paused: boolean } | null>;
  /** Resumes a paused execution; `resumed` is false when it was not paused. */
  resume(executionId: string): Promise<{ readonly state: ExecutionState; readonly resumed: boolean } | null>;
}

/** Builds the handle; `runOwned` starts a submitted execution this node owns (the Runner's). */
export function engineIn(ctx: EngineContext, runOwned: (row: ExecutionRow & NewExecution) => void, tx: Transaction): EngineInTransaction {
  return {
    async submit(command, options = {}) {
      const id = newId<ExecutionId>();
      if (options.held === true) {
        // Built first: a scope the workflow does not admit is refused here, not at COMMIT.
        const row = newExecutionRow(ctx, id, command, false);
        tx.commitBehind(insertExecution(tx, row, null));
        return id;
      }
      const row = newExecutionRow(ctx, id, command, true);
      // The row and its recovery job in one statement of the caller's transaction: they commit with
      // the caller's rows or not at all (decision 051). The job is built first (no round trip).
      const job = await buildAdvanceJob(ctx.boss, id, ctx.leaseSeconds * 2);
      tx.commitBehind(insertExecutionWithJob(tx, row, ctx.leaseSeconds, job));
      // This node owns generation 1 and its lease already: run it once committed, no queue hop.
      tx.afterCommit(() => runOwned(row));
      return id;
    },

    async signal(executionId, name, payload = null) {
      const outcome = await signalIn(ctx, tx, executionId, name, payload);
      if (outcome === null) return false;
      tx.afterCommit(() => (outcome === 'woken' ? ctx.advanceHere(executionId) : ctx.notifier.notify(SIGNALS_CHANNEL, executionId)));
      return true;
    },

    async cancel(executionId) {
      const outcome = await cancelIn(ctx, tx, executionId);
      if (outcome === null) return null;
      if (outcome.state === 'cancelling') {
        tx.afterCommit(() => {
          ctx.notifier.notify(SIGNALS_CHANNEL, executionId);
          if (outcome.wake) ctx.advanceHere(executionId);
        });
      }
      return { state: outcome.state };
    },

    async pause(executionId) {
      const outcome = await pauseIn(tx, executionId);
      if (outcome === null) return null;
      if (outcome.notify) tx.afterCommit(() => ctx.notifier.notify(SIGNALS_CHANNEL, executionId));
      return { state: outcome.state, paused: outcome.paused };
    },

    async resume(executionId) {
      const outcome = await resumeIn(ctx, tx, executionId);
      if (outcome === null) return null;
      if (outcome.wake) tx.afterCommit(() => ctx.advanceHere(executionId));
      return { state: outcome.state, resumed: outcome.resumed };
    },
  };
}

import { newId, type ExecutionId } from '@openbot/domain';
import { cancelIn, signalIn } from './commands';
import type { EngineContext } from './context';
import type { EngineInTransaction } from '../authoring/engine-in-transaction';
import { newExecutionRow } from './new-execution';
import { announceEvents, SIGNALS_CHANNEL } from '../logs/node-listener';
import { pauseIn, resumeIn } from './pause';
import { buildAdvanceJob } from '../base/queue';
import { insertExecution, insertExecutionWithJob } from '../sql/executions';
import type { ExecutionRow, NewExecution } from '../base/store';
import type { Transaction } from '../base/tx';

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
      const outcome = await pauseIn(ctx, tx, executionId);
      if (outcome === null) return null;
      if (outcome.notify) tx.afterCommit(() => ctx.notifier.notify(SIGNALS_CHANNEL, executionId));
      if (outcome.announce) tx.afterCommit(() => announceEvents(ctx, executionId));
      return { state: outcome.state, paused: outcome.paused };
    },

    async resume(executionId) {
      const outcome = await resumeIn(ctx, tx, executionId);
      if (outcome === null) return null;
      if (outcome.resumed) tx.afterCommit(() => announceEvents(ctx, executionId));
      if (outcome.wake) tx.afterCommit(() => ctx.advanceHere(executionId));
      return { state: outcome.state, resumed: outcome.resumed };
    },
  };
}

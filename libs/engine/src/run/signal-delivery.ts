import type { EngineContext } from './context';
import type { LocalRun } from './local-run';
import * as signalSql from '../sql/signals';

/**
 * Delivers a stored signal to a phase running here: a cancel or a pause closes its gate (EXE-11),
 * any other signal rings the phase's inbox. The cancel
 * signal decides by its phase number (EXE-15): only the signal of the execution's latest cancel
 * request cancels; one of an older phase (replayed, restored, or never requested) is consumed
 * unused, so it can never cancel a later phase.
 */
export async function deliverSignal(ctx: EngineContext, run: LocalRun): Promise<void> {
  const { rows } = await ctx.pool.query<{ cancel: boolean; paused: boolean }>({
    ...signalSql.deliverSignal,
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

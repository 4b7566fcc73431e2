import type { TurnPhaseContext } from '../../../../platform/src/turn-core/turn-contract';
import { stopCounting, type TurnState } from '../../../../platform/src/turn-core/turn-state';

/** How soon a Turn paused for recovery may check again once resumed. */
const RECHECK_MS = 1000;

/** Why a Turn paused itself: a check it must make before acting could not be made (DLG-01). */
export type RecoveryReason = 'approval-check-failed' | 'limit-check-failed';

/**
 * A stopped check leaves the Turn paused for recovery (DLG-01): an approval check or a limit
 * check (saved usage, saved limits) that could not read what it needs neither acts nor refuses.
 * The pause is saved with this checkpoint (the engine's pause command and the pause's start, so
 * its time does not count), with `turn.paused { reason }`. Once resumed, the phase runs again and
 * checks anew from what is saved then; the results saved so far stay.
 */
export function pausedForRecovery(context: TurnPhaseContext, next: TurnState, reason: RecoveryReason, signals: readonly string[]) {
  const now = context.clock.now();
  context.commands.pause(context.executionId);
  context.commands.write(
    `INSERT INTO execution_pauses (execution_id, paused_at) VALUES ($1, $2)
     ON CONFLICT (execution_id) DO UPDATE SET paused_at = COALESCE(execution_pauses.paused_at, EXCLUDED.paused_at)`,
    [context.executionId, new Date(now)],
  );
  context.publisher.publish('turn.paused', { reason }, { step: next.step });
  // The timer makes the resumed Turn check again even when nothing else wakes it (earlier signals
  // were consumed by this run); while paused it only parks the Turn again.
  return { state: stopCounting(next, now), wait: { ...(signals.length > 0 ? { signals: [...signals] } : {}), until: new Date(now + RECHECK_MS) } };
}

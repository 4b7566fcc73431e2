import type { Sql } from '../../../../platform/src/database/sql';
import { pausedMsOf } from '../../executions/pause-time';
import type { TurnPhaseContext } from '../../../../platform/src/turn-core/turn-contract';
import { countedMs, turnTime, type TurnState } from '../../../../platform/src/turn-core/turn-state';

/**
 * The Turn's time as a phase starts (TASK-03). Time counts only while the Turn can run: the
 * execution's pauses since it last looked are taken out (its counting start moves forward by
 * them), and a Turn that waited only for approvals starts counting again now. Saved with the
 * phase's checkpoint, so a takeover neither resets nor double-counts it (TASK-01).
 */
export async function startCounting(db: Sql, context: TurnPhaseContext, state: TurnState): Promise<TurnState> {
  return countFrom(context, state, await pausedMsOf(db, context.executionId));
}

/** `startCounting` with the execution's paused time read already (the first step reads it beside the Bot). */
export function countFrom(context: TurnPhaseContext, state: TurnState, paused: number): TurnState {
  const now = context.clock.now();
  const { activeMs, countingSince } = turnTime(state);
  const shift = Math.max(0, paused - (state.pausedMsSeen ?? 0));
  return { ...state, activeMs, countingSince: countingSince === null ? now : countingSince + shift, pausedMsSeen: paused };
}

/** Whether the counted time reached `maxSeconds`: the phase then ends the Turn instead of sending anything. */
export function pastTimeLimit(state: TurnState, now: number): boolean {
  return state.bot !== null && countedMs(state, now) >= state.bot.limits.maxSeconds * 1000;
}

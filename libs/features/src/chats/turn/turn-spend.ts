import type { TurnPhase } from '../../../../platform/src/turn-core/turn-contract';
import { countedMs, turnTime } from '../../../../platform/src/turn-core/turn-state';

/** Every step of every Turn writes it: prepared once per connection, not parsed and planned each time. */
const SAVE_LIMITS = {
  name: 'turns.save_limits',
  text: `INSERT INTO execution_limits (execution_id, max_steps, max_seconds, max_output_tokens, steps, output_tokens, active_ms, counting_since, paused_ms_seen, final_stop, max_cost_micros)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (execution_id) DO UPDATE SET steps = EXCLUDED.steps, output_tokens = EXCLUDED.output_tokens, active_ms = EXCLUDED.active_ms,
           counting_since = EXCLUDED.counting_since, paused_ms_seen = EXCLUDED.paused_ms_seen, final_stop = EXCLUDED.final_stop`,
};

/**
 * A Turn phase that also writes the Turn's limits and spending into `execution_limits`, in the
 * transaction of the phase's checkpoint (so the view never runs ahead of the saved state). The
 * limits themselves are the saved Bot snapshot's: recovery resumes from them (TASK-01).
 */
export function withSpend(phase: TurnPhase): TurnPhase {
  return {
    ...phase,
    async run(context) {
      const outcome = await phase.run(context);
      const state = outcome.state;
      if (state.bot !== null) {
        // Re-based on the checkpoint's time: counted so far, and counting from now on (or not).
        const now = context.clock.now();
        const activeMs = countedMs(state, now);
        const countingSince = turnTime(state).countingSince === null ? null : now;
        const { maxSteps, maxSeconds, maxOutputTokens } = state.bot.limits;
        const maxCostMicros = state.bot.limits.maxCostMicros ?? null;
        context.commands.write(SAVE_LIMITS, [
            context.executionId,
            maxSteps,
            maxSeconds,
            maxOutputTokens,
            state.step,
            state.outputTokens,
            activeMs,
            countingSince === null ? null : new Date(countingSince),
            state.pausedMsSeen ?? 0,
            state.stop,
            maxCostMicros,
          ],
        );
      }
      return outcome;
    },
  };
}

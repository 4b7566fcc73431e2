import type { Json, Workflow } from '@openbot/engine';

/**
 * A workflow of `k` ticks for event-stream tests: each phase emits `probe.tick { n }`, and every
 * tick but the last then waits for a `go` signal, so the execution runs as long as the test wants
 * and each new event exists only once the test signals.
 */
export function ticksWorkflow(name: string): Workflow<{ [key: string]: Json; n: number; k: number }, { k: number }> {
  return {
    name,
    initial: ({ k }) => ({ n: 0, k }),
    next: (s) => (s.n < s.k ? { phase: 'tick' } : { end: 'completed' }),
    phases: {
      tick: {
        async run({ state, emit }) {
          const n = state.n + 1;
          emit('probe.tick', { n });
          return n < state.k ? { state: { ...state, n }, wait: { signals: ['go'] } } : { state: { ...state, n } };
        },
      },
    },
  };
}

import {
  canTransition,
  EXECUTION_STATES,
  FINAL_STATES,
  isExecutionState,
  isFinal,
  stateAfterCancelRequest,
  type ExecutionState,
} from './execution-state';

/**
 * The transition table of EXE-12, written out by hand from the spec (not derived from the code),
 * so that every one of the 81 pairs is checked against an independent statement of the rule.
 */
const ALLOWED: Readonly<Record<ExecutionState, readonly ExecutionState[]>> = {
  // Not started yet: a claim runs it; a cancel request enters cancelling (nothing runs, so it may
  // also end cancelled at once); a node that cannot run it interrupts it.
  queued: ['running', 'cancelling', 'cancelled', 'interrupted'],
  // The owner's loop: checkpoints, waits, requeues, cancel requests, an unknown unsafe write, ends.
  running: ['running', 'waiting', 'queued', 'cancelling', 'outcome_unknown', 'completed', 'failed', 'interrupted'],
  // A signal, timer or child notice wakes it (queued, or running when the owner resumes at once).
  waiting: ['running', 'queued', 'cancelling', 'interrupted'],
  // Only the owner, after closing the gate and releasing resources, ends it; it never completes.
  cancelling: ['cancelling', 'cancelled', 'failed', 'interrupted', 'outcome_unknown'],
  // Leaves only through a saved result (queued/running) or a decision (failed/cancelled), or a cancel request.
  outcome_unknown: ['running', 'queued', 'cancelling', 'failed', 'cancelled', 'interrupted'],
  completed: [],
  failed: [],
  cancelled: [],
  interrupted: [],
};

const PAIRS = EXECUTION_STATES.flatMap((from) => EXECUTION_STATES.map((to) => [from, to, ALLOWED[from].includes(to)] as const));

describe('execution states (EXE-12)', () => {
  it('[EXE-12] has exactly the nine states of the spec, four of them final', () => {
    expect([...EXECUTION_STATES].sort()).toEqual(
      ['queued', 'running', 'waiting', 'cancelling', 'outcome_unknown', 'completed', 'failed', 'cancelled', 'interrupted'].sort(),
    );
    expect([...FINAL_STATES].sort()).toEqual(['cancelled', 'completed', 'failed', 'interrupted']);
    for (const state of EXECUTION_STATES) {
      expect(isFinal(state)).toBe(FINAL_STATES.includes(state));
      expect(isExecutionState(state)).toBe(true);
    }
    expect(isExecutionState('paused')).toBe(false);
    expect(isExecutionState('')).toBe(false);
    expect(isExecutionState('COMPLETED')).toBe(false);
  });

  it('[EXE-12] the hand-written table covers all 81 pairs', () => {
    expect(PAIRS).toHaveLength(81);
  });

  it.each(PAIRS)('[EXE-12] %s → %s is allowed: %s', (from, to, allowed) => {
    expect(canTransition(from, to)).toBe(allowed);
  });

  it('[EXE-12] the four final states never transition, not even to themselves', () => {
    for (const from of FINAL_STATES) {
      for (const to of EXECUTION_STATES) expect(canTransition(from, to)).toBe(false);
    }
  });

  it('[EXE-12] a cancel request enters cancelling from every non-final state and changes nothing on a final one', () => {
    for (const state of EXECUTION_STATES) {
      const after = stateAfterCancelRequest(state);
      if (isFinal(state)) {
        expect(after).toBeNull();
      } else {
        expect(after).toBe('cancelling');
        expect(canTransition(state, 'cancelling')).toBe(true);
      }
    }
  });

  it('[EXE-12] a cancel request does not claim the outside action stopped: only cancelling reaches cancelled from running work', () => {
    expect(canTransition('running', 'cancelled')).toBe(false);
    expect(canTransition('waiting', 'cancelled')).toBe(false);
    expect(canTransition('cancelling', 'cancelled')).toBe(true);
    // A cancelled request never turns into a success, and never goes back to running work.
    expect(canTransition('cancelling', 'completed')).toBe(false);
    expect(canTransition('cancelling', 'running')).toBe(false);
    expect(canTransition('cancelling', 'queued')).toBe(false);
    expect(canTransition('cancelling', 'waiting')).toBe(false);
  });

  it('[EXE-12] outcome_unknown waits for a saved result or a decision: it never completes nor waits directly', () => {
    const leaves = EXECUTION_STATES.filter((to) => canTransition('outcome_unknown', to));
    expect(leaves.sort()).toEqual(['cancelled', 'cancelling', 'failed', 'interrupted', 'queued', 'running']);
    expect(canTransition('outcome_unknown', 'completed')).toBe(false);
    expect(canTransition('outcome_unknown', 'waiting')).toBe(false);
    expect(canTransition('outcome_unknown', 'outcome_unknown')).toBe(false);
    // Only running work (or a cancel in progress) can discover a lost outcome.
    const enters = EXECUTION_STATES.filter((from) => canTransition(from, 'outcome_unknown'));
    expect(enters.sort()).toEqual(['cancelling', 'running']);
  });

  it('[EXE-12] every final state is reachable from running work or a cancel, and every state can be left unless final', () => {
    for (const state of FINAL_STATES) {
      expect(EXECUTION_STATES.some((from) => canTransition(from, state))).toBe(true);
    }
    for (const state of EXECUTION_STATES) {
      const exits = EXECUTION_STATES.filter((to) => to !== state && canTransition(state, to));
      expect(exits.length > 0).toBe(!isFinal(state));
    }
  });
});

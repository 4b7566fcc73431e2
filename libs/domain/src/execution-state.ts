/**
 * Execution states and the transitions between them (EXE-12), as one pure rule that the
 * engine consults before every state write.
 */
export const EXECUTION_STATES = [
  'queued',
  'running',
  'waiting',
  'cancelling',
  'outcome_unknown',
  'completed',
  'failed',
  'cancelled',
  'interrupted',
] as const;
export type ExecutionState = (typeof EXECUTION_STATES)[number];

export const FINAL_STATES: readonly ExecutionState[] = ['completed', 'failed', 'cancelled', 'interrupted'];

export function isFinal(state: ExecutionState): boolean {
  return FINAL_STATES.includes(state);
}

export function isExecutionState(value: string): value is ExecutionState {
  return (EXECUTION_STATES as readonly string[]).includes(value);
}

/**
 * Which state may follow which. Notable rules:
 * - a cancel request enters `cancelling`; only the owner, once its phase gate is closed and its
 *   resources released, moves it to `cancelled` (a request does not prove the outside action stopped);
 * - `outcome_unknown` leaves only through a saved result or a decision (CALL-03, RES-02);
 * - final states never change.
 */
export function canTransition(from: ExecutionState, to: ExecutionState): boolean {
  switch (from) {
    case 'queued':
      return to === 'running' || to === 'cancelling' || to === 'cancelled' || to === 'interrupted';
    case 'running':
      return (
        to === 'running' ||
        to === 'waiting' ||
        to === 'queued' ||
        to === 'cancelling' ||
        to === 'outcome_unknown' ||
        to === 'completed' ||
        to === 'failed' ||
        to === 'interrupted'
      );
    case 'waiting':
      return to === 'running' || to === 'queued' || to === 'cancelling' || to === 'interrupted';
    case 'cancelling':
      return to === 'cancelling' || to === 'cancelled' || to === 'failed' || to === 'interrupted' || to === 'outcome_unknown';
    case 'outcome_unknown':
      return to === 'running' || to === 'queued' || to === 'cancelling' || to === 'failed' || to === 'cancelled' || to === 'interrupted';
    case 'completed':
    case 'failed':
    case 'cancelled':
    case 'interrupted':
      return false;
    default: {
      const unreachable: never = from;
      return unreachable;
    }
  }
}

/** A cancel request on `state`: the state it enters, or null when it changes nothing (final). */
export function stateAfterCancelRequest(state: ExecutionState): ExecutionState | null {
  if (isFinal(state)) return null;
  return 'cancelling';
}

import type { RunScope } from './run-scope';

/** One run of an execution on this node, from its claim to its wait, end, or loss. */
export interface LocalRun {
  readonly id: string;
  readonly generation: number;
  /** The scope of the phase running now, if any: signals close its gate. */
  scope: RunScope | null;
  /** Set when the node drains: the loop stops at its next checkpoint. */
  draining: boolean;
  lost: boolean;
  /** Aborted with 'cancel', 'lease-lost' or 'shutdown' between phases too (backoff sleeps end at once). */
  readonly abort: AbortController;
}

export type Stop = 'lost' | 'waiting' | 'ended' | 'drained';

import type { SealedIdentity } from './identity-guard';
import type { RunInbox } from './inbox';
import type { RunScope } from '../base/run-scope';

/** One run of an execution on this node, from its claim to its wait, end, or loss. */
export interface LocalRun {
  readonly id: string;
  readonly generation: number;
  /** The scope of the phase running now, if any: signals close its gate. */
  scope: RunScope | null;
  /** The inbox of the phase running now, if any: a stored signal rings it. */
  inbox?: RunInbox | null;
  /** Set when the node drains: the loop stops at its next checkpoint. */
  draining: boolean;
  lost: boolean;
  /** Aborted with 'cancel', 'pause', 'lease-lost' or 'shutdown' between phases too (backoff sleeps end at once). */
  readonly abort: AbortController;
  /** The execution's sealed identity (null: submitted without one, nothing to check). */
  readonly identity: SealedIdentity | null;
  /** `member` or `service`: a child may only start a workflow of the same audience (IDN-11). */
  readonly scopeKind: string;
  /** Set when a check found the identity invalid: the run fails `forbidden`, whatever the phase did (IDN-06). */
  identityInvalid: string | null;
}

export type Stop = 'lost' | 'waiting' | 'ended' | 'drained';

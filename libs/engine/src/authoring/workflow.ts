import type { ErrorCategory, ExecutionId } from '@openbot/domain';
import type { Json, ResourceRef } from '../base/json';
import type { PhaseCalls, PhaseEvents } from './phase-services';
import type { Clock } from '../base/clock';
import type { ResourceStack } from '../base/resource-stack';
import type { Statement } from '../sql/statement';

export type { Json, ResourceRef } from '../base/json';

/** What `next` decides from the saved state (EXE-07). */
export type Decision =
  | { readonly phase: string }
  | { readonly end: 'completed'; readonly result?: Json }
  | { readonly end: 'failed'; readonly category?: ErrorCategory; readonly cause: unknown };

/** What a phase hands back: the new state, and whether to wait before the next decision. */
export type PhaseOutcome<S extends Json> =
  | { readonly state: S }
  | { readonly state: S; readonly wait: WaitFor };

export interface WaitFor {
  /** Signal names that wake the execution (a saved, unconsumed signal wakes it at once). */
  readonly signals?: readonly string[];
  /** A durable timer: the execution wakes at this time even if no signal arrives. */
  readonly until?: Date;
  /** Wake when every attached child has ended (their notices are saved). */
  readonly children?: boolean;
  /**
   * Wake when every named execution (any execution, not only a child) has reached a final state.
   * No polling: each one's end transaction wakes this waiter (waits.ts); one that already ended
   * counts at once. Their final states come in `wake.executions`.
   */
  readonly executions?: readonly string[];
}

/** Why the execution woke from its last wait: given to `next` and to the phase. */
export interface Wake {
  readonly signals: ReadonlyArray<{ readonly name: string; readonly payload: Json }>;
  readonly timer: boolean;
  readonly children: ReadonlyArray<{ readonly childId: ExecutionId; readonly state: string }>;
  /** When the wait named `executions`: their final states once all ended (empty when something else woke it first). */
  readonly executions?: ReadonlyArray<{ readonly executionId: ExecutionId; readonly state: string }>;
}

/** A signal as the phase reads it from its inbox. */
export interface InboxSignal {
  readonly name: string;
  readonly payload: Json;
}

/**
 * Signals that reach a running phase (steering input, approval decisions): a signal is a stored
 * row first; a phase reads it here and it is consumed only in that phase's checkpoint
 * transaction. One the phase did not read stays stored: it wakes the next wait that names it at
 * once, or the next phase reads it. A crash before the checkpoint leaves what was read unread.
 */
export interface PhaseInbox {
  /** The unread stored signals of these names, oldest first (each is answered once per phase run). */
  receive(names: readonly string[]): Promise<InboxSignal[]>;
  /**
   * Waits until a signal of these names is stored (answers them), or throws GateClosed when the
   * gate closes. With `until`, it answers [] as soon as that signal aborts (the phase's own work
   * finished first).
   */
  next(names: readonly string[], until?: AbortSignal): Promise<InboxSignal[]>;
}

/** Work submitted by a workflow for another execution (an end's continuation, a phase's command). */
export interface SubmittedWork {
  readonly workflow: string;
  readonly input: Json;
  readonly scope: { readonly kind: 'member' | 'service'; readonly id: string; readonly organizationId: string | null };
  readonly resource?: ResourceRef;
  /** Without one, the work carries the submitting execution's identity (the same work, continued). */
  readonly identity?: Json;
}

/**
 * Commands to other executions that commit in the transaction of this phase's checkpoint
 * (STC-01): none of them happens if the checkpoint does not commit, and none is lost once it did.
 */
export interface ExecutionCommands {
  /** Stores a signal for another execution and wakes it if it waits (`cancel` is not a signal name). */
  signal(executionId: string, name: string, payload?: Json): void;
  /** Requests the cancel of another execution (EXE-12); a final one is left as it is. */
  cancel(executionId: string): void;
  /** Submits a new execution (not a child): it runs once the checkpoint commits. */
  submit(command: SubmittedWork): ExecutionId;
  /**
   * A feature's own row write (an approval request) in the checkpoint's transaction: it commits
   * with the phase's state and emitted events, or not at all (APPR-01). Make it idempotent
   * (`ON CONFLICT DO NOTHING`): a phase run again after a failed checkpoint issues it again.
   * A `{ name, text }` statement is prepared once per connection (one a hot path writes each step).
   */
  write(sql: string | Statement, params?: readonly unknown[]): void;
  /**
   * Pauses an execution (TASK-02) in the checkpoint's transaction: the phase's own one to leave it
   * paused for recovery (DLG-01). A running execution waits once its checkpoint is saved; a final
   * or cancelling one is left as it is. Resume is the usual command.
   */
  pause(executionId: string): void;
}

export interface PhaseContext<S extends Json> {
  readonly executionId: ExecutionId;
  readonly generation: number;
  /** `<phase>#<generation>`: the activity name of this run (EXE-09). */
  readonly activity: string;
  /** 1-based number of the phase being run (completed phases + 1). */
  readonly step: number;
  readonly state: S;
  readonly wake: Wake | null;
  /** Aborted when the phase gate closes: cancel, lease loss, shutdown (EXE-11). */
  readonly signal: AbortSignal;
  /** Resources opened here close before the phase ends and before `after` runs (RES-01). */
  readonly resources: ResourceStack;
  /** Outside calls: intent → sending → result, reused after a takeover (CALL-01, EXE-10). */
  readonly calls: PhaseCalls;
  /** Publishes events while the phase runs: stored in small batches, then announced (EVT-01). */
  readonly publisher: PhaseEvents;
  /** The engine's clock: workflow code reads the time here, never from `Date.now()` (TASK-03). */
  readonly clock: Clock;
  /**
   * Numbers in [0, 1) from the execution's stored seed and this step: a replay of the step
   * (another attempt, another owner) sees the same sequence (FW-04).
   */
  random(): number;
  /** The saved result of a child execution that completed; undefined while it has not. */
  childResult(childId: ExecutionId): Promise<Json | undefined>;
  /** Appends an event to the execution's log at the next checkpoint (EVT-01). */
  emit(type: string, payload?: Json, position?: { step?: number; attempt?: number }): void;
  /**
   * Starts a child execution at the next checkpoint, in the same transaction (STC-01, EXE-13).
   * The child has its parent's scope and a copy of its identity (IDN-02: the child keeps every
   * limit of its source); a workflow of another audience is refused (IDN-11).
   */
  startChild(child: { workflow: string; input: Json; attached?: boolean; resource?: ResourceRef; identityHint?: Json }): ExecutionId;
  /** Signals sent to this execution while the phase runs; consumed with its checkpoint. */
  readonly inbox: PhaseInbox;
  /** Signal, cancel or submit other executions in this phase's checkpoint transaction (STC-01). */
  readonly commands: ExecutionCommands;
}

export interface Phase<S extends Json> {
  run(context: PhaseContext<S>): Promise<PhaseOutcome<S>>;
  /** Runs after the phase's resources closed and its result was saved (EXE-07). */
  after?(context: { readonly executionId: ExecutionId; readonly state: S }): Promise<void>;
  /** Retries of a failing phase, with backoff from 100 ms to 5 s (default 0: fail at once). */
  readonly retries?: number;
}

/** The end checkpoint's own transaction: business rows commit with the end state (STC-01). */
export interface EndTransaction {
  /** A `{ name, text }` statement is prepared once per connection (one every end runs). */
  query(sql: string | Statement, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>>; rowCount: number | null }>;
}

export interface EndContext<S extends Json> {
  readonly executionId: ExecutionId;
  readonly state: S;
  readonly outcome: 'completed' | 'failed' | 'cancelled' | 'interrupted';
  readonly tx: EndTransaction;
  /** Lets a held execution (submitted `held`, waiting in `queued`) run: its job commits with this end (STC-04). */
  admit(executionId: string): Promise<void>;
  /**
   * Submits a new execution in this end's transaction; it runs once the end commits. Without an
   * `identity` it carries the ending execution's identity (the same work, continued).
   */
  submit(command: SubmittedWork): Promise<ExecutionId>;
  /** Stores a signal for another execution in this end's transaction (STC-01); false when that one has ended. */
  signal(executionId: string, name: string, payload?: Json): Promise<boolean>;
  /** Requests another execution's cancel in this end's transaction (STC-01). */
  cancel(executionId: string): Promise<void>;
  /** Appends an event in this end's transaction, just before `execution.ended` (a Turn's `memory.learning`). */
  emit(type: string, payload?: Json): void;
}

/** A workflow registered by a feature (EXE-05): the engine has no feature-specific branches. */
export interface Workflow<S extends Json = Json, I extends Json = Json> {
  readonly name: string;
  /**
   * Who may submit it (IDN-11): `member` work refuses a service scope, `service` work refuses a
   * member scope. Undeclared: either (only for workflows that act for no one in particular).
   */
  readonly audience?: 'member' | 'service';
  /** The first saved state, from the command's input. */
  initial(input: I): S;
  /** Decides from the saved state; the time comes from `clock` (the engine's, injectable). */
  next(state: S, wake: Wake | null, clock: Clock): Decision;
  readonly phases: Readonly<Record<string, Phase<S>>>;
  /** Saves the feature's end state in the end checkpoint's transaction. */
  end?(context: EndContext<S>): Promise<void>;
  /** Fields the feature adds to its `execution.ended` event (e.g. the Turn's `stop`): pure, from the final state. */
  endedFacts?(context: EndedFactsContext<S>): Record<string, Json>;
}

/** What `endedFacts` sees: the final saved state, the outcome and the completed result (null otherwise). */
export interface EndedFactsContext<S extends Json> {
  readonly state: S;
  readonly outcome: 'completed' | 'failed' | 'cancelled' | 'interrupted';
  readonly result: Json;
}

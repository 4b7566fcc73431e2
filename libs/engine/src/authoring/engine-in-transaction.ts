import type { ExecutionId, ExecutionState } from '@openbot/domain';
import type { SignalSender } from './define-workflow';
import type { NewExecutionCommand } from './engine-api';
import type { Json } from './workflow';

/**
 * The engine inside a caller's transaction (STC-01; docs/decisions/077-transaction-scoped-engine-handle.md):
 * what it writes commits with the caller's rows or not at all, and what must follow the COMMIT
 * (run a submitted execution on this node, wake or tell a signalled one's owner) is handed to the
 * transaction, which does it once committed and drops it on rollback. Nothing is left for the
 * caller to remember. Get one with `engine.in(tx)`; signal through the workflow's definition
 * (`TURN.signal(engine.in(tx), id, 'approval', payload)`).
 */
export interface EngineInTransaction extends SignalSender<Promise<boolean>> {
  /**
   * Submits an execution (a scope the workflow does not admit is Forbidden, IDN-11; `identity`
   * is stored sealed, IDN-01). This node owns it and runs it once the transaction committed;
   * `held`: it waits in `queued` with no job until an end admits it (STC-04). Answers as soon as
   * the insert is sent: COMMIT goes right behind it, and its failure fails the transaction.
   */
  submit(command: NewExecutionCommand, options?: { readonly held?: boolean }): Promise<ExecutionId>;
  /**
   * Stores a signal (`cancel` is not a signal name) and wakes its execution if it waits (no lost
   * wake-up: a signal saved before the waiter saved its waiting state is found by the waiter's own
   * check under the same row lock). False when the execution does not exist or has ended.
   */
  signal(executionId: string, name: string, payload?: Json): Promise<boolean>;
  /** A cancel request (EXE-12, EXE-15); on a final execution it changes nothing. Null when there is none. */
  cancel(executionId: string): Promise<{ readonly state: ExecutionState } | null>;
  /** Pauses an execution (TASK-02); `paused` is false when it has ended or is being cancelled. */
  pause(executionId: string): Promise<{ readonly state: ExecutionState; readonly paused: boolean } | null>;
  /** Resumes a paused execution; `resumed` is false when it was not paused. */
  resume(executionId: string): Promise<{ readonly state: ExecutionState; readonly resumed: boolean } | null>;
}

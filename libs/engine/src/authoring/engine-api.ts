import { Conflict, type ExecutionId, type ExecutionState } from '@openbot/domain';
import type { Json, ResourceRef } from './workflow';

/* The shapes of the engine's public API: its commands, views and decisions (a node's options: node/engine-options.ts). */

/** Who a command acts for (IDN-10, IDN-11): a member, or a service of the platform or an organization. */
export interface CommandScope {
  readonly kind: 'member' | 'service';
  readonly id: string;
  readonly organizationId: string | null;
}

export interface SubmitCommand {
  readonly workflow: string;
  readonly input: Json;
  readonly scope: CommandScope;
  /** With a key, the same key and input answer the same execution; another input is a conflict (EXE-02). */
  readonly commandKey?: string;
  /** What the key is scoped to besides the caller, e.g. `chat:<id>` (default: the workflow name). */
  readonly target?: string;
  readonly resource?: ResourceRef;
  /**
   * Who the work is for and acts as (IDN-01; the product's `ExecutionIdentity` as JSON): sealed
   * with the execution, checked on restore and before outside sends (IDN-06). Not part of the
   * command key's input: a retry by another token of the same scope answers the same execution.
   */
  readonly identity?: Json;
}

export interface ExecutionView {
  readonly id: ExecutionId;
  readonly workflow: string;
  readonly state: ExecutionState;
  readonly generation: number;
  readonly step: number;
  readonly organizationId: string | null;
  readonly scope: { readonly kind: string; readonly id: string };
  readonly resource: ResourceRef | null;
  readonly parentId: string | null;
  /** Paused (TASK-02): it waits and is not run until resumed. */
  readonly paused: boolean;
  readonly errorId: string | null;
  readonly category: string | null;
}

export type OperatorDecision = { readonly decision: 'succeeded'; readonly result?: Json } | { readonly decision: 'failed' | 'stop' };

/** A decision on an execution that is not waiting in outcome_unknown (docs/http-api.md: 409). */
export class NotAwaitingDecision extends Conflict {
  constructor(state: string) {
    super('ExecutionNotAwaitingDecision', `The execution is ${state}, not outcome_unknown.`);
  }
}

/** A new execution as the engine stores it: what `engine.in(tx).submit` and an end's `submit` take. */
export interface NewExecutionCommand {
  readonly workflow: string;
  readonly input: Json;
  readonly scope: { readonly kind: 'member' | 'service'; readonly id: string; readonly organizationId: string | null };
  readonly resource?: ResourceRef;
  /**
   * Who the work is for and acts as (IDN-01; the product's `ExecutionIdentity`): stored sealed
   * with the execution (SEC-01) and checked on restore and before outside sends (IDN-06).
   * Without one (or with null) nothing is checked.
   */
  readonly identity?: Json;
}

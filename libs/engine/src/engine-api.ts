import { Conflict, type ExecutionId, type ExecutionState } from '@openbot/domain';
import type { Pool } from 'pg';
import type { Clock } from './clock';
import type { FaultPoints } from './fault-points';
import type { EngineMetrics } from './metrics';
import type { EngineSealer, FailureRecorder, IdentityCheck } from './ports';
import type { DeadNodeWatchOptions } from './presence';
import type { EngineTracing } from './tracing';
import type { Json, ResourceRef } from './workflow';

/* The shapes of the engine's public API: its options, commands, views and decisions. */

export interface EngineOptions {
  /** The pool TypeORM owns: the engine's SQL runs on it. */
  readonly pool: Pool;
  /** For the node's LISTEN connection and pg-boss's own small pool. */
  readonly connectionString: string;
  readonly sealer: EngineSealer;
  readonly failures: FailureRecorder;
  readonly nodeId: string;
  /** Lease length; renewed every third of it (default 15 s). */
  readonly leaseSeconds?: number;
  /** How long pg-boss workers wait between polls for due jobs (default 0.5 s, its minimum). */
  readonly pollingSeconds?: number;
  readonly faults?: FaultPoints;
  /**
   * The product's check of execution identities (IDN-06): asked when a run is restored or woken
   * and before every outside send. Absent: identities are stored but never checked.
   */
  readonly identityCheck?: IdentityCheck;
  /** The time workflows and schedules see (default: the system clock); tests inject a ManualClock. */
  readonly clock?: Clock;
  /** How often this node looks for due schedules (default 1 s; 0: only when `schedules.tick()` is called). */
  readonly schedulePollMs?: number;
  /**
   * Dead-node detection (docs/decisions/026-dead-node-detection.md): this node holds a presence
   * lock and takes over executions of owners that hold none past a grace period. `false`: leases
   * only (a takeover waits for the lease to run out).
   */
  readonly deadNodes?: DeadNodeWatchOptions | false;
  /**
   * After a phase run's first event, its events are written together at most this often
   * (default 50 ms): a token stream costs a commit per window, not per token.
   */
  readonly eventWindowMs?: number;
  /** A fire time found later than this is missed: the schedule's missed-run policy decides (default 60 s). */
  readonly scheduleMisfireSeconds?: number;
  /** Where phase durations, takeovers, event batches and ends are reported (default: nowhere; decision 034). */
  readonly metrics?: EngineMetrics;
  /** Where spans of phase runs and outside calls go (default: nowhere; decision 040). */
  readonly tracing?: EngineTracing;
}

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

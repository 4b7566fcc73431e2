import type { Pool } from 'pg';
import type { Clock } from '../base/clock';
import type { FaultPoints } from '../base/fault-points';
import type { EngineMetrics } from '../base/metrics';
import type { EngineSealer, FailureRecorder, IdentityCheck } from '../base/ports';
import type { EngineTracing } from '../base/tracing';
import type { DeadNodeWatchOptions } from './presence';

/** How one node's engine is built: its pool, its sealer, its clock, its lease and takeover settings. */
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

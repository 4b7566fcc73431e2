import type { Pool } from 'pg';
import type { CheckpointBatcher } from '../logs/checkpoint-batcher';
import type { EventWriteBatcher } from '../logs/event-write-batcher';
import type { PgBoss } from 'pg-boss';
import type { Clock } from '../base/clock';
import type { FaultPoints } from '../base/fault-points';
import type { EngineMetrics } from '../base/metrics';
import type { EngineTracing } from '../base/tracing';
import type { NodeListener, Notifier } from '../logs/node-listener';
import type { RecentResults } from '../base/recent-results';
import type { FailureRecorder, IdentityCheck } from '../base/ports';
import type { SealedJson } from '../base/sealed-json';
import type { Json, Workflow } from '../authoring/workflow';

/** What every part of the engine shares on one node. */
export interface EngineContext {
  readonly pool: Pool;
  readonly boss: PgBoss;
  readonly sealed: SealedJson;
  readonly failures: FailureRecorder;
  /** Absent: identities are stored but never checked (a standalone engine). */
  readonly identityCheck: IdentityCheck | undefined;
  readonly faults: FaultPoints;
  readonly listener: NodeListener;
  readonly notifier: Notifier;
  readonly nodeId: string;
  /** The time workflows see (injectable: tests move it without waiting). */
  readonly clock: Clock;
  readonly leaseSeconds: number;
  readonly workflows: ReadonlyMap<string, Workflow<Json, Json>>;
  /** Group commit of plain checkpoints. */
  readonly checkpoints: CheckpointBatcher;
  /** The results of executions that completed on this node lately (decision 060). */
  readonly recentResults: RecentResults;
  /** Group commit of events published while phases run. */
  readonly eventWrites: EventWriteBatcher;
  /** How often a running phase's events are written after its first (EventPublisher). */
  readonly eventWindowMs?: number;
  /** Claims and runs an execution on this node now (after a commit made it runnable); its job stays the fallback. */
  readonly advanceHere: (executionId: string) => void;
  /** What an exporter learns of phases, takeovers, event batches and ends (no-op by default). */
  readonly metrics: EngineMetrics;
  /** Where spans of phases and outside calls go (no-op by default; decision 040). */
  readonly tracing: EngineTracing;
}

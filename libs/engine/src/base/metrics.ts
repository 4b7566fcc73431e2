/**
 * What the engine tells a metrics exporter (docs/decisions/034-metrics.md). The engine knows no
 * exporter: the product implements this port (prom-client in libs/platform) and the default does
 * nothing, so an engine without metrics pays a no-op call. Labels are workflow names and fixed
 * words, never an execution ID.
 */
export interface EngineMetrics {
  /** A phase run ended: `outcome` is `succeeded`, or the run's stop (`ended`, `waiting`, `lost`, `drained`). */
  phaseEnded(workflow: string, outcome: PhaseMetricOutcome, seconds: number): void;
  /** This node took over an execution another node owned: its lease ran out, or the watch found its owner dead. */
  takeover(cause: TakeoverCause): void;
  /** One statement of the event write batcher wrote the events of `executions` executions. */
  eventBatchWritten(executions: number): void;
  /** An execution reached a final state (counted when its end is written, in the ending transaction). */
  executionEnded(workflow: string, state: string): void;
}

export type PhaseMetricOutcome = 'succeeded' | 'ended' | 'waiting' | 'lost' | 'drained';
export type TakeoverCause = 'lease_expired' | 'dead_node';

export const noEngineMetrics: EngineMetrics = {
  phaseEnded: () => undefined,
  takeover: () => undefined,
  eventBatchWritten: () => undefined,
  executionEnded: () => undefined,
};

import type { ExecutionId, ExecutionState } from '@openbot/domain';
import type { Clock } from '../base/clock';
import type { FaultPoints } from '../base/fault-points';
import type { Transaction } from '../base/tx';
import type { ExecutionEvent } from '../logs/event-log';
import type { ExecutionView, OperatorDecision, SubmitCommand } from './engine-api';
import type { EngineInTransaction } from './engine-in-transaction';
import type { ScheduleSpec, ScheduleView } from './schedule-spec';
import type { Json, Workflow } from './workflow';

/** Recurring schedules that submit workflows (docs/decisions/022-schedules-on-croner.md). */
export interface EngineSchedules {
  /** Creates or updates the schedule named `spec.name`. */
  upsert(spec: ScheduleSpec): Promise<ScheduleView>;
  remove(name: string): Promise<boolean>;
  get(name: string): Promise<ScheduleView | null>;
  /** The fire times handled so far and the execution each submitted. */
  fires(name: string): Promise<Array<{ fireAt: Date; executionId: ExecutionId }>>;
  /** Looks for due fire times now; answers how many it submitted. */
  tick(): Promise<number>;
}

/**
 * The engine as a feature sees it (the authoring entry, `@openbot/engine`): register workflows
 * (EXE-05), submit, work inside a transaction (`in(tx)`), signal, cancel, pause, resume, decide,
 * read and observe. It is also the Nest injection token. The node's implementation (`EngineNode`,
 * `@openbot/engine/node`) is built only by the platform's engine wiring; features never see it.
 */
export abstract class Engine {
  abstract readonly schedules: EngineSchedules;
  /** Crash points tests arm (docs/decisions/021): a feature marks where a crash is worth testing. */
  abstract readonly faults: FaultPoints;
  abstract readonly nodeId: string;
  /** The time workflows see: features that measure work in their own commands read it here (TASK-03). */
  abstract readonly clock: Clock;
  abstract register<S extends Json, I extends Json>(workflow: Workflow<S, I>): void;
  /** Submits an execution in its own transaction; a retry with the same command key answers the same one. */
  abstract submit(command: SubmitCommand): Promise<{ executionId: ExecutionId; created: boolean }>;
  /** The engine inside the caller's transaction (decision 077). */
  abstract in(tx: Transaction): EngineInTransaction;
  abstract signal(executionId: string, name: string, payload?: Json): Promise<boolean>;
  abstract cancel(executionId: string): Promise<{ state: ExecutionState } | null>;
  abstract pause(executionId: string): Promise<{ state: ExecutionState; paused: boolean } | null>;
  abstract resume(executionId: string): Promise<{ state: ExecutionState; resumed: boolean } | null>;
  abstract decide(executionId: string, decision: OperatorDecision): Promise<{ state: ExecutionState } | null>;
  /** The execution's stored identity (opened), or null. */
  abstract identity(executionId: string): Promise<Json | null>;
  abstract get(executionId: string): Promise<ExecutionView | null>;
  /** The result of a completed execution; undefined while it runs or when it ended otherwise. */
  abstract result(executionId: string): Promise<Json | undefined>;
  abstract observe(executionId: string, after?: number, signal?: AbortSignal, follow?: boolean): AsyncGenerator<ExecutionEvent, void, undefined>;
  /** Resolves with the final state. */
  abstract waitForEnd(executionId: string, signal?: AbortSignal): Promise<ExecutionState>;
}

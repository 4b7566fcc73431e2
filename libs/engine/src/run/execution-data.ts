import { newSeed } from '../base/clock';
import { aad, type SealedJson } from '../base/sealed-json';
import type { ExecutionRow } from '../base/store';
import type { Json, Wake, WaitFor } from '../authoring/workflow';

/** What the sealed `executions.data` holds: the workflow's state and why it last woke. */
export interface ExecutionData {
  readonly state: Json;
  readonly wake: Wake | null;
  /** Set while waiting: what wakes it (timers as ISO strings). */
  readonly wait: { signals: string[]; until: string | null; children: boolean; executions?: string[] } | null;
  /** The end result of a completed execution. */
  readonly result?: Json;
  /** Set once a phase started a child: only then does the end look for open children. */
  readonly spawned?: boolean;
  /** The seed of the execution's random (FW-04), set when it is created; older rows use their ID. */
  readonly seed?: string;
}

/** The data of a new execution: its first state and its random seed. */
export function initialData(state: Json): ExecutionData {
  return { state, wake: null, wait: null, seed: newSeed() };
}

/** Stored data that cannot be read is a failure of that execution, not an outage (CALL-07). */
export class CorruptExecutionData extends Error {
  constructor(executionId: string, cause: unknown) {
    super(`the stored data of execution ${executionId} cannot be read`, { cause });
  }
}

export function openData(sealed: SealedJson, row: Pick<ExecutionRow, 'id' | 'key_id' | 'data'>): ExecutionData {
  try {
    const value = sealed.open(row.key_id, row.data, aad.executionData(row.id)) as unknown as ExecutionData;
    if (value === null || typeof value !== 'object' || !('state' in value)) throw new Error('not execution data');
    return value;
  } catch (error) {
    throw new CorruptExecutionData(row.id, error);
  }
}

export function sealData(sealed: SealedJson, executionId: string, data: ExecutionData): { keyId: string; data: Buffer } {
  return sealed.seal(data as unknown as Json, aad.executionData(executionId));
}

export function waitSpec(wait: WaitFor): NonNullable<ExecutionData['wait']> {
  return {
    signals: [...(wait.signals ?? [])],
    until: wait.until?.toISOString() ?? null,
    children: wait.children ?? false,
    ...(wait.executions !== undefined && wait.executions.length > 0 ? { executions: [...wait.executions] } : {}),
  };
}

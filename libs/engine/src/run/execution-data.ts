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
    const value: unknown = sealed.open(row.key_id, row.data, aad.executionData(row.id));
    if (!isExecutionData(value)) throw new Error('not execution data');
    return value;
  } catch (error) {
    throw new CorruptExecutionData(row.id, error);
  }
}

export function sealData(sealed: SealedJson, executionId: string, data: ExecutionData): { keyId: string; data: Buffer } {
  return sealed.seal(dataJson(data), aad.executionData(executionId));
}

/** Sealed data this engine wrote (authenticated, so only an older shape can differ): its state, and a wake and wait that are objects or null. */
function isExecutionData(value: unknown): value is ExecutionData {
  if (value === null || typeof value !== 'object' || !('state' in value)) return false;
  const { wake, wait } = value as { wake?: unknown; wait?: unknown };
  return (wake === null || typeof wake === 'object') && (wait === null || typeof wait === 'object');
}

/** The data as the JSON that is sealed: every field written out, so a field the type gains must be added here. */
function dataJson(data: ExecutionData): Json {
  const { wake, wait } = data;
  return {
    state: data.state,
    wake:
      wake === null
        ? null
        : {
            signals: wake.signals.map((signal) => ({ name: signal.name, payload: signal.payload })),
            timer: wake.timer,
            children: wake.children.map((child) => ({ childId: child.childId, state: child.state })),
            ...(wake.executions === undefined ? {} : { executions: wake.executions.map((ended) => ({ executionId: ended.executionId, state: ended.state })) }),
          },
    wait:
      wait === null
        ? null
        : { signals: [...wait.signals], until: wait.until, children: wait.children, ...(wait.executions === undefined ? {} : { executions: [...wait.executions] }) },
    ...(data.result === undefined ? {} : { result: data.result }),
    ...(data.spawned === undefined ? {} : { spawned: data.spawned }),
    ...(data.seed === undefined ? {} : { seed: data.seed }),
  };
}

export function waitSpec(wait: WaitFor): NonNullable<ExecutionData['wait']> {
  return {
    signals: [...(wait.signals ?? [])],
    until: wait.until?.toISOString() ?? null,
    children: wait.children ?? false,
    ...(wait.executions !== undefined && wait.executions.length > 0 ? { executions: [...wait.executions] } : {}),
  };
}

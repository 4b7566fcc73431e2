import type { ExecutionState } from '@openbot/domain';

/**
 * The rows the engine's SQL reads and writes (the statements themselves live by role in sql/).
 */

export interface ExecutionRow {
  id: string;
  workflow: string;
  organization_id: string | null;
  scope_kind: string;
  scope_id: string;
  resource_type: string | null;
  resource_id: string | null;
  parent_id: string | null;
  attached: boolean;
  state: ExecutionState;
  step: number;
  generation: number;
  owner_node: string | null;
  leased: boolean;
  cancel_phase: number;
  /** A paused execution waits and is not run until resumed (TASK-02). */
  paused: boolean;
  key_id: string;
  data: Buffer;
  error_id: string | null;
  category: string | null;
  /** The sealed identity (IDN-01): only read where a run starts (a claim), not by every select. */
  identity_key_id?: string | null;
  identity?: Buffer | null;
}

export interface PendingEvent {
  readonly type: string;
  readonly step: number | null;
  readonly attempt: number | null;
  readonly keyId: string | null;
  readonly data: Buffer | null;
}

/** The columns a new execution is written with; the rest take their defaults. */
export type NewExecution = Pick<
  ExecutionRow,
  'id' | 'workflow' | 'organization_id' | 'scope_kind' | 'scope_id' | 'resource_type' | 'resource_id' | 'parent_id' | 'attached' | 'state' | 'owner_node' | 'key_id' | 'data'
> & { identity_key_id: string | null; identity: Buffer | null };

export interface EventRow {
  seq: number;
  type: string;
  step: number | null;
  attempt: number | null;
  at: Date;
  key_id: string | null;
  data: Buffer | null;
}


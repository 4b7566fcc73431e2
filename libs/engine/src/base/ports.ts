import type { ErrorCategory, ErrorId } from '@openbot/domain';
import type { QueryConfig, QueryResult, QueryResultRow } from 'pg';
import type { Json } from './json';

/** A pg Pool or a client inside a transaction. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(config: QueryConfig | string, values?: unknown[]): Promise<QueryResult<R>>;
}

/** Envelope encryption for sealed values (SEC-01); implemented by the product's Sealer. */
export interface EngineSealer {
  seal(plaintext: Buffer, associatedData: string): { keyId: string; data: Buffer };
  open(envelope: { keyId: string; data: Buffer }, associatedData: string): Buffer;
}

/**
 * Saves a full failure cause as a sealed error record inside the given transaction (ERR-01).
 * `detail`: what the failure says of itself that is safe to show (decision 082), kept in clear beside the category.
 */
export interface FailureRecorder {
  record(tx: Queryable, failure: { errorId: ErrorId; category: ErrorCategory; origin: string; cause: unknown; executionId?: string; detail?: { readonly [key: string]: Json } }): Promise<void>;
}

/**
 * Whether an execution's identity is still valid (IDN-06): its owner and actor exist, its token
 * is neither revoked nor expired. The engine asks when a run is restored or woken and before
 * every outside send; an answer must reflect the database now (no cache), so a revocation takes
 * effect at the next check. The identity is the feature's JSON (the engine does not read it).
 */
export interface IdentityCheck {
  check(identity: Json, executionId: string): Promise<IdentityVerdict>;
  /**
   * The identity of a child started by `source` (IDN-02: it keeps every limit of its source).
   * Absent: the child gets a copy of its parent's identity. `hint` is what the starting phase
   * said about the child (`startChild`'s `identityHint`, e.g. a delegation hop); null: nothing.
   */
  derive?(parent: Json, sourceExecutionId: string, hint: Json | null): Json;
}

export type IdentityVerdict = 'valid' | { readonly invalid: string };

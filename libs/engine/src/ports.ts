import type { ErrorCategory, ErrorId } from '@openbot/domain';
import type { QueryConfig, QueryResult, QueryResultRow } from 'pg';

/** A pg Pool or a client inside a transaction. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(config: QueryConfig | string, values?: unknown[]): Promise<QueryResult<R>>;
}

/** Envelope encryption for sealed values (SEC-01); implemented by the product's Sealer. */
export interface EngineSealer {
  seal(plaintext: Buffer, associatedData: string): { keyId: string; data: Buffer };
  open(envelope: { keyId: string; data: Buffer }, associatedData: string): Buffer;
}

/** Saves a full failure cause as a sealed error record inside the given transaction (ERR-01). */
export interface FailureRecorder {
  record(tx: Queryable, failure: { errorId: ErrorId; category: ErrorCategory; origin: string; cause: unknown; executionId?: string }): Promise<void>;
}

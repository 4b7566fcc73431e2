import { newId, type ErrorId } from '@openbot/domain';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { FaultPoints } from '../base/fault-points';
import { namedCategory, namedDetail } from '../base/failure-facts';
import type { FailureRecorder, Queryable } from '../base/ports';
import { backoffMs, sleep, type RunScope } from '../base/run-scope';
import { aad, type SealedJson } from '../base/sealed-json';
import { retryStorage } from '../base/storage-retry';
import { withTransaction, type Transaction } from '../base/tx';
import type { Json } from '../base/json';
import { noSpan, type TraceSpan } from '../base/tracing';
import * as callSql from '../sql/calls';

export type CallStatus = 'intent' | 'sending' | 'succeeded' | 'failed' | 'unknown';

/** What a call reaches (STC-10): a language model, a tool, an App, an OAuth provider, a Channel. */
export type CallKind = 'model' | 'tool' | 'app' | 'oauth' | 'channel' | 'other';

export interface CallRow {
  id: string;
  call_key: string;
  kind: CallKind;
  step: number;
  attempt: number;
  generation: number;
  safe: boolean;
  status: CallStatus;
  idempotency_key: string;
  key_id: string | null;
  result: Buffer | null;
  /** Set when the call failed for good: its error record (ERR-01), reused by a later owner. */
  error_id: string | null;
}

/** An unsafe write whose result was lost: the execution waits for a saved result or a decision (CALL-03). */
export class OutcomeUnknown extends Error {
  constructor(readonly callKey: string) {
    super(`the outcome of call ${callKey} is unknown`);
  }
}

/**
 * A call that failed for good (its attempts are used up, or it is unsafe to repeat). `errorId`
 * names its error record, also on its call row: an execution that fails of it ends with that ID,
 * and a new owner replaying the phase gets the same failure instead of sending again (ERR-01).
 */
export class CallFailed extends Error {
  constructor(
    readonly callKey: string,
    cause: unknown,
    readonly errorId: string | null = null,
  ) {
    super(`call ${callKey} failed`, { cause });
  }
}

export interface CallOptions {
  /** Safe calls may be repeated with the same provider idempotency key (CALL-02). */
  readonly safe: boolean;
  /** What the call reaches (default `other`), stored on its rows (STC-10). */
  readonly kind?: CallKind;
  /** Attempts in all for a safe call (default 3); an unsafe call is sent at most once. */
  readonly attempts?: number;
  /**
   * Feature rows that commit in the same transaction as the saved result (USE-01: confirmed
   * usage, result and events together). It runs once per saved result, also for an old owner's
   * late result (CALL-05), so its writes must be idempotent by `callId`.
   */
  readonly commit?: (tx: Transaction, saved: { readonly callId: string; readonly attempt: number; readonly result: Json }) => Promise<void>;
  /**
   * Feature rows that commit with the closing of an attempt that was sent and never answered:
   * one an earlier owner left `sending` (it lost the execution mid-call), or one its own gate cut
   * off (a pause, a cancel, a shutdown, a lost lease). It runs once per attempt, for whichever
   * closes it first. That attempt's result may still be saved late (CALL-05): then `commit` runs
   * for it too, so both must be idempotent by `callId` (USE-04: unknown, then settled).
   */
  readonly onAbandonedAttempt?: (tx: Queryable, abandoned: { readonly callId: string; readonly attempt: number }) => Promise<void>;
  /**
   * Runs when a failed attempt is recorded (it may publish a failure event). `retryInMs`: with
   * `retrying`, how long the call log waits before the next attempt (the sender's Retry-After or the backoff).
   */
  readonly onFailedAttempt?: (failure: { readonly attempt: number; readonly error: unknown; readonly retrying: boolean; readonly retryInMs?: number }) => Promise<void> | void;
}

/** A short fixed description of a failure for a span: the sender's category, else the error's class. */
function errorKind(error: unknown): string {
  const category = (error as { category?: unknown } | null)?.category;
  if (typeof category === 'string' && /^[a-z_]{1,40}$/.test(category)) return category;
  return error instanceof Error ? error.constructor.name : 'error';
}

/** The sender says its request went out and its answer was lost (`resultLost: true`). */
function resultLost(error: unknown): boolean {
  return (error as { resultLost?: unknown } | null)?.resultLost === true;
}

/** A failure the sender marks as not worth repeating (`retryable: false`) fails the call at once. */
function retryable(error: unknown): boolean {
  return (error as { safeToRetry?: unknown } | null)?.safeToRetry !== false;
}

/**
 * The sender refused before anything left the process (`notSent: true`, e.g. a budget or rate
 * limit said no): the attempt fails without an error record, so the call is no failure for good,
 * and a later run of the phase asks again instead of reusing a failure.
 */
function notSent(error: unknown): boolean {
  return (error as { notSent?: unknown } | null)?.notSent === true;
}

/** The sender's own wait (a provider's Retry-After, in seconds) when it names one, else the backoff. */
function retryDelay(attempt: number, error: unknown): number {
  const after = (error as { retryAfterSeconds?: unknown } | null)?.retryAfterSeconds;
  return typeof after === 'number' && after >= 0 ? Math.min(after * 1000, 30_000) : backoffMs(attempt);
}

export interface CallRequest {
  /** Reused by every attempt of this call, across takeovers (CALL-02). */
  readonly idempotencyKey: string;
  /** 1-based; a repeated request gets a new attempt (CALL-04). */
  readonly attempt: number;
  readonly signal: AbortSignal;
  /**
   * Asks again whether the execution's identity is still valid (IDN-06), for a sender that
   * waited for something (a secret) after the call log's own check: it throws when it is not.
   * Absent when the run has no identity to check.
   */
  readonly checkIdentity?: () => Promise<void>;
  /**
   * This attempt's span (decision 040): the sender may add what it learns (a model call's GenAI
   * attributes: model, tokens). Never prompt text, a secret or a sealed value. A no-op without a tracer.
   */
  readonly span: TraceSpan;
}

/** Shared queries on the call log: by ID, by step, latest attempt (STC-10). */
export const callQueries = {
  async byId(db: Queryable, callId: string): Promise<CallRow | null> {
    const { rows } = await db.query<CallRow>({
      ...callSql.callById,
      values: [callId],
    });
    return rows[0] ?? null;
  },
  /** Every attempt of one call, oldest first (full history: rows are never deleted). */
  async byKey(db: Queryable, executionId: string, callKey: string): Promise<CallRow[]> {
    const { rows } = await db.query<CallRow>({
      ...callSql.callsByKey,
      values: [executionId, callKey],
    });
    return rows;
  },
  /** The latest attempt of one call, or null before its first intent. */
  async latestAttempt(db: Queryable, executionId: string, callKey: string): Promise<CallRow | null> {
    const { rows } = await db.query<CallRow>({
      ...callSql.callLatestAttempt,
      values: [executionId, callKey],
    });
    return rows[0] ?? null;
  },
  async byStep(db: Queryable, executionId: string, step: number): Promise<CallRow[]> {
    const { rows } = await db.query<CallRow>({
      ...callSql.callsByStep,
      values: [executionId, step],
    });
    return rows;
  },
  async latestUnknown(db: Queryable, executionId: string): Promise<CallRow | null> {
    const { rows } = await db.query<CallRow>({
      ...callSql.callsLatestUnknown,
      values: [executionId],
    });
    return rows[0] ?? null;
  },
};

/**
 * The call log of one phase run: intent → sending → result, each its own commit (CALL-01).
 * A saved result is reused, never requested again (EXE-10, CALL-03). Results are saved even by
 * an owner that lost its generation (CALL-05): only checkpoints are fenced.
 */
export class CallLog {
  constructor(
    private readonly deps: {
      readonly db: Pool;
      readonly sealed: SealedJson;
      readonly faults: FaultPoints;
      readonly executionId: string;
      readonly generation: number;
      readonly step: number;
      readonly scope: RunScope;
      /** Saves the cause of a call that failed for good (absent: the row gets no error ID). */
      readonly failures?: FailureRecorder;
      /**
       * Throws when the execution's identity is no longer valid (IDN-06). Asked before every
       * send, after the intent is saved: a refused call stays in the log as failed, never sent.
       */
      readonly checkIdentity?: () => Promise<void>;
      /**
       * Called in the transaction that saves a result for a call already marked unknown (it may
       * end an outcome_unknown wait): the save and the resume commit together, so no crash between
       * them leaves a saved result behind an execution still waiting for a decision.
       */
      readonly onLateResult?: (tx: Queryable) => Promise<void>;
      /** The phase run's span: each attempt sent gets a child span (decision 040). */
      readonly span?: TraceSpan;
    },
  ) {}

  async call<T extends Json>(name: string, options: CallOptions, send: (request: CallRequest) => Promise<T>): Promise<T> {
    const { db, executionId, step, scope } = this.deps;
    const callKey = `${step}:${name}`;
    // With the gate open, the history is read with the first attempt's intent (written when there is none),
    // and the identity check of that attempt runs beside it: both come before `sending` (IDN-06, CALL-01).
    const identity = scope.gateClosed || this.deps.checkIdentity === undefined ? null : settled(this.deps.checkIdentity());
    const first = scope.gateClosed ? null : await this.firstIntent(callKey, options);
    if (first !== null && first.mine !== null) return this.attempts(name, options, send, { lastAttempt: 0, idempotencyKey: first.mine.idempotencyKey }, first.mine.id, identity);
    const history = first?.history ?? (await retryStorage(() => callQueries.byKey(db, executionId, callKey), scope.signal));
    if (first !== null && history.length === 0) return this.call(name, options, send);
    const done = history.find((c) => c.status === 'succeeded');
    if (done) return this.open(done) as T;
    const latest = history.at(-1);
    if (latest && latest.status === 'failed' && latest.error_id !== null && latest.generation < this.deps.generation) {
      // An earlier owner saw this call fail for good and died before the failed end committed:
      // the failure stands with its error ID; the call is not sent again (ERR-01, CALL-03).
      throw new CallFailed(callKey, new Error(`call ${callKey} failed for good under an earlier owner`), latest.error_id);
    }
    if (latest && (latest.status === 'unknown' || (latest.status === 'sending' && !latest.safe))) {
      // Only a row still `sending` becomes unknown: a result saved meanwhile is read again, not lost.
      if (latest.status === 'sending' && !(await this.markUnknown(latest.id))) return this.call(name, options, send);
      throw new OutcomeUnknown(callKey);
    }
    // A safe attempt an earlier owner left `sending` (it crashed mid-call) is over: close it for the audit trail.
    if (latest && latest.status === 'sending' && latest.safe) await this.abandon(latest, options.onAbandonedAttempt);
    return this.attempts(name, options, send, latest === undefined ? null : { lastAttempt: latest.attempt, idempotencyKey: latest.idempotency_key });
  }

  /**
   * The attempts after `from`, the last attempt so far (null: the call is new). `intentId`: the
   * next attempt's intent is saved already (by `firstIntent`), so it is sent without writing one;
   * `identity` is then that attempt's identity check, already under way.
   */
  private async attempts<T extends Json>(
    name: string,
    options: CallOptions,
    send: (request: CallRequest) => Promise<T>,
    from: { readonly lastAttempt: number; readonly idempotencyKey: string } | null,
    intentId: string | null = null,
    identity: Promise<{ readonly refused: unknown } | null> | null = null,
  ): Promise<T> {
    const { db, executionId, step, scope } = this.deps;
    const callKey = `${step}:${name}`;
    const maxAttempts = options.safe ? Math.max(1, options.attempts ?? 3) : 1;
    const idempotencyKey = from?.idempotencyKey ?? randomUUID();
    let saved = intentId;
    let attempt = from?.lastAttempt ?? 0;
    for (;;) {
      attempt += 1;
      let id: string;
      let checked: Promise<{ readonly refused: unknown } | null> | null = null;
      if (saved !== null) {
        id = saved;
        saved = null;
        checked = identity;
      } else {
        scope.assertOpen();
        id = randomUUID();
        const { rows: mine } = await retryStorage(
          () =>
            db.query<{ id: string }>({
              ...callSql.callIntent,
              values: [id, executionId, callKey, step, attempt, this.deps.generation, options.safe, idempotencyKey, options.kind ?? 'other'],
            }),
          scope.signal,
        );
        // Another owner took this attempt number meanwhile (an old generation retrying): read the
        // history again and decide from it, instead of failing on the unique key.
        if (mine.length === 0) return this.call(name, options, send);
      }
      await this.deps.faults.hit('call.intent.committed', { executionId, step, callKey });
      if (this.deps.checkIdentity !== undefined) {
        const outcome = await (checked ?? settled(this.deps.checkIdentity()));
        if (outcome !== null) {
          await this.setStatus(id, 'failed');
          throw outcome.refused;
        }
      }
      // A request arriving after the gate closed starts no work (EXE-11).
      scope.assertOpen();
      await this.setStatus(id, 'sending');
      await this.deps.faults.hit('call.sending.committed', { executionId, step, callKey });
      let result: T;
      const span = (this.deps.span ?? noSpan).startCall({ executionId, callKey, kind: options.kind ?? 'other', attempt, safe: options.safe });
      try {
        result = await send({ idempotencyKey, attempt, signal: scope.signal, span, ...(this.deps.checkIdentity ? { checkIdentity: this.deps.checkIdentity } : {}) });
        span.end();
      } catch (error) {
        // The error's class or the sender's category, never its message (it may quote content).
        span.end({ error: errorKind(error) });
        if (!options.safe && resultLost(error)) {
          // The request may have done its work: an unsafe write is never sent again blindly (CALL-03).
          await this.setStatus(id, 'unknown');
          throw new OutcomeUnknown(callKey);
        }
        if (options.safe && scope.gateClosed) {
          // Cut off by the gate (a pause, a shutdown, a cancel, a lost lease): this attempt is over,
          // not the call. No error ID: the run that continues it sends the next attempt under the
          // same key. It was sent, so it is closed as a new owner would close it (USE-02): once,
          // by whichever comes first, with what the feature records for an attempt left open.
          await this.abandon({ id, attempt }, options.onAbandonedAttempt);
          throw error;
        }
        const unsent = notSent(error);
        const retrying = options.safe && attempt < maxAttempts && !scope.gateClosed && retryable(error) && !unsent;
        const errorId = retrying || unsent ? null : await this.failForGood(id, callKey, error);
        if (retrying || unsent) await this.setStatus(id, 'failed');
        const retryInMs = retryDelay(attempt, error);
        await options.onFailedAttempt?.({ attempt, error, retrying, ...(retrying ? { retryInMs } : {}) });
        if (!retrying) throw new CallFailed(callKey, error, errorId);
        await sleep(retryInMs, scope.signal);
        continue;
      }
      await this.saveResult(id, result, callKey, attempt, options.commit);
      return result;
    }
  }

  /**
   * The call's history, or (when it had none) its first attempt's intent, in one statement.
   * `mine`: the intent written, to be sent; `history`: the attempts there were (empty: another
   * owner wrote the first intent meanwhile, so the history is read again).
   */
  private async firstIntent(callKey: string, options: CallOptions): Promise<{ readonly history: CallRow[]; readonly mine: { idempotencyKey: string; id: string } | null }> {
    const { db, executionId, step, scope } = this.deps;
    const id = randomUUID();
    const idempotencyKey = randomUUID();
    const { rows } = await retryStorage(
      () =>
        db.query<CallRow>({
          ...callSql.callFirstIntent,
          values: [id, executionId, callKey, step, this.deps.generation, options.safe, idempotencyKey, options.kind ?? 'other'],
        }),
      scope.signal,
    );
    const mine = rows.find((row) => row.id === id);
    return mine === undefined ? { history: rows, mine: null } : { history: [], mine: { idempotencyKey: mine.idempotency_key, id } };
  }

  private open(row: CallRow): Json {
    if (row.key_id === null || row.result === null) return null;
    return this.deps.sealed.open(row.key_id, row.result, aad.callResult(row.id));
  }

  private async setStatus(id: string, status: CallStatus): Promise<void> {
    await retryStorage(
      () =>
        this.deps.db.query({
          ...callSql.callStatus,
          values: [id, status],
        }),
      undefined,
    );
  }

  /** The failed status, the error ID and its sealed cause commit together; answers the error ID. */
  private async failForGood(id: string, callKey: string, cause: unknown): Promise<string | null> {
    const failures = this.deps.failures;
    if (failures === undefined) {
      await this.setStatus(id, 'failed');
      return null;
    }
    const errorId = newId<ErrorId>();
    await retryStorage(
      () =>
        withTransaction(this.deps.db, async (tx) => {
          await tx.query({
            ...callSql.callFailed,
            values: [id, errorId],
          });
          // The category and safe detail the cause names (a model provider's refusal, decision 082), else `internal`.
          const detail = namedDetail(cause);
          await failures.record(tx, {
            errorId,
            category: namedCategory(cause) ?? 'internal',
            origin: `call ${callKey}`,
            cause,
            executionId: this.deps.executionId,
            ...(detail !== null ? { detail } : {}),
          });
        }),
      undefined,
    );
    await this.deps.faults.hit('call.failed.committed', { executionId: this.deps.executionId, step: this.deps.step, callKey });
    return errorId;
  }

  private async abandon(row: Pick<CallRow, 'id' | 'attempt'>, onAbandoned: CallOptions['onAbandonedAttempt']): Promise<void> {
    const close = (db: Queryable) =>
      db.query({
        ...callSql.callAbandon,
        values: [row.id],
      });
    await retryStorage<unknown>(
      () =>
        onAbandoned === undefined
          ? close(this.deps.db)
          : withTransaction(this.deps.db, async (tx) => {
              if ((await close(tx)).rowCount === 1) await onAbandoned(tx, { callId: row.id, attempt: row.attempt });
            }),
      undefined,
    );
  }

  private async markUnknown(id: string): Promise<boolean> {
    const { rowCount } = await retryStorage(
      () =>
        this.deps.db.query({
          ...callSql.callUnknown,
          values: [id],
        }),
      undefined,
    );
    return rowCount === 1;
  }

  /** Holds the known result while its save retries; the provider is not called again (CALL-06). */
  private async saveResult(id: string, result: Json, callKey: string, attempt: number, commit: CallOptions['commit']): Promise<void> {
    const envelope = this.deps.sealed.seal(result, aad.callResult(id));
    await this.deps.faults.hit('call.result.before-commit', { executionId: this.deps.executionId, step: this.deps.step, callKey });
    const values = [id, envelope.keyId, envelope.data];
    const inTransaction = async (tx: Transaction): Promise<void> => {
      const was = (await tx.query<{ was: CallStatus }>({ ...callSql.callResult, values })).rows[0]?.was;
      // A result saved twice (a retried commit whose reply was lost) runs the feature rows once.
      if (was !== 'succeeded' && commit !== undefined) await commit(tx, { callId: id, attempt, result });
      // A late result of an unsafe write another owner marked unknown (CALL-03, CALL-05).
      if (was === 'unknown') await this.deps.onLateResult?.(tx);
    };
    await retryStorage(async () => {
      if (commit === undefined) {
        // One statement when the call is not unknown, the common case; a late result takes the transaction.
        const { rowCount } = await this.deps.db.query({ ...callSql.callResultUnlessUnknown, values });
        if (rowCount === 1) return;
      }
      await withTransaction(this.deps.db, inTransaction);
    }, undefined);
    await this.deps.faults.hit('call.result.committed', { executionId: this.deps.executionId, step: this.deps.step, callKey });
  }
}

/** A check's outcome as a value (null: it passed): started early, it never rejects unobserved. */
function settled(check: Promise<void>): Promise<{ readonly refused: unknown } | null> {
  return check.then(
    () => null,
    (refused: unknown) => ({ refused }),
  );
}

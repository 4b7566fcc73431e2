import type { Queryable } from '@openbot/engine';
import type { BillingScope } from './budget-usage';

export interface BucketRow {
  id: string;
  rpm: number | null;
  tpm: number | null;
  requests: number | null;
  tokens: number | null;
  elapsed: number;
}

/** The rate limits that apply to a call: its organization's, its Bot's and its member's ($1 organization, $2 scope kind, $3 scope ID, $4 Bot). */
export const APPLICABLE_RATE_LIMITS = `organization_id = $1
  AND (scope_kind = 'organization' OR (scope_kind = 'bot' AND scope_id = $4::uuid)
       OR (scope_kind = 'member' AND $2 = 'member' AND scope_id = $3::uuid))`;

const APPLICABLE = APPLICABLE_RATE_LIMITS;

/** A bucket row's columns as `take` reads them (`BucketRow`). */
export const BUCKET_COLUMNS = `id, requests_per_minute AS rpm, tokens_per_minute AS tpm, requests_available AS requests, tokens_available AS tokens,
                    greatest(0, extract(epoch FROM now() - refilled_at))::float8 AS elapsed`;

const scopeValues = (scope: BillingScope) => [scope.organizationId, scope.scopeKind, scope.scopeId, scope.botId];

/** A bucket's level now: what it held at `refilled_at` plus the refill since, at most one minute's worth. */
const level = (available: number, perMinute: number, elapsedSeconds: number) => Math.min(perMinute, available + (perMinute * elapsedSeconds) / 60);

/**
 * Token buckets in PostgreSQL, shared by every node (LIM-01): requests (model calls) and tokens
 * per minute, per scope. A call takes one request and its input estimate when it starts; its
 * confirmed usage corrects the token bucket later (`correct`). A call whose estimate is above a
 * whole minute's worth needs a full bucket, so it waits instead of never running.
 */
export const rateBuckets = {
  /**
   * Takes a call's request and tokens from every applicable bucket, or answers how long to wait
   * (milliseconds) until all of them have enough. Locks the buckets in ID order: the last part of
   * the reservation's lock order (budgets, credit account, rate limits). With `consume: false`
   * (admission) it reads without locking and takes nothing.
   */
  async take(db: Queryable, scope: BillingScope, tokens: number, consume: boolean): Promise<{ readonly waitMs: number } | null> {
    const { rows } = await db.query<BucketRow>({
      name: consume ? 'billing.rate_buckets_locked' : 'billing.rate_buckets',
      text: `SELECT ${BUCKET_COLUMNS}
               FROM rate_limits WHERE ${APPLICABLE} ORDER BY id ${consume ? 'FOR UPDATE' : ''}`,
      values: scopeValues(scope),
    });
    if (rows.length === 0) return null;
    const { waitMs, next } = rateBuckets.plan(rows, tokens);
    if (waitMs !== null) return { waitMs };
    if (consume) {
      await db.query({
        name: 'billing.rate_buckets_take',
        text: `UPDATE rate_limits r SET requests_available = n.requests, tokens_available = n.tokens, refilled_at = now()
                 FROM unnest($1::uuid[], $2::float8[], $3::float8[]) AS n(id, requests, tokens) WHERE r.id = n.id`,
        values: [next.map((n) => n.id), next.map((n) => n.requests), next.map((n) => n.tokens)],
      });
    }
    return null;
  },

  /**
   * What taking one request and `tokens` from these buckets would leave in each, or how long to
   * wait (milliseconds) until all of them have enough: `take`'s arithmetic, for rows read elsewhere
   * (admission reads them with its other checks, decision 081).
   */
  plan(rows: readonly BucketRow[], tokens: number): { readonly waitMs: number | null; readonly next: Array<{ id: string; requests: number | null; tokens: number | null }> } {
    let waitSeconds = 0;
    const next: Array<{ id: string; requests: number | null; tokens: number | null }> = [];
    for (const row of rows) {
      const requests = row.rpm === null ? null : level(row.requests ?? row.rpm, row.rpm, row.elapsed);
      const available = row.tpm === null ? null : level(row.tokens ?? row.tpm, row.tpm, row.elapsed);
      if (requests !== null && requests < 1) waitSeconds = Math.max(waitSeconds, ((1 - requests) * 60) / row.rpm!);
      const need = row.tpm === null ? 0 : Math.max(1, Math.min(tokens, row.tpm));
      if (available !== null && available < need) waitSeconds = Math.max(waitSeconds, ((need - available) * 60) / row.tpm!);
      next.push({ id: row.id, requests: requests === null ? null : requests - 1, tokens: available === null ? null : available - tokens });
    }
    return { waitMs: waitSeconds > 0 ? Math.max(1, Math.ceil(waitSeconds * 1000)) : null, next };
  },

  /** Confirmed usage corrects what a call's estimate took from the token buckets (`delta` > 0: it used more). */
  async correct(tx: Queryable, scope: BillingScope, delta: number): Promise<void> {
    if (delta === 0) return;
    await tx.query({
      name: 'billing.rate_buckets_correct',
      text: `UPDATE rate_limits SET tokens_available = coalesce(tokens_available, tokens_per_minute) - $5
              WHERE ${APPLICABLE} AND tokens_per_minute IS NOT NULL`,
      values: [...scopeValues(scope), delta],
    });
  },
};

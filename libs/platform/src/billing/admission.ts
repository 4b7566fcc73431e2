import { BudgetExceeded, ModelNotPriced, RateLimited } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import type { DefaultPrice } from '../config/config';
import { CREDITS_SQL, exhausted, STANDING_COLUMNS, STANDING_JOINS, toStanding, type BillingScope, type StandingRow } from './budget-usage';
import { APPLICABLE_RATE_LIMITS, BUCKET_COLUMNS, rateBuckets, type BucketRow } from './rate-buckets';

interface AdmissionRow {
  budgets: StandingRow[];
  credits: { balance: string; reserved: string } | null;
  buckets: BucketRow[];
  unpriced: string | null;
}

/**
 * Admission (PLAT-08): a Turn cannot start, queue or steer once a budget that applies to it or the
 * organization's credits have nothing left (limit − spent − reserved ≤ 0): 402 BudgetExceeded
 * naming the budget (null: the credits); a rate limit with nothing left answers 429 RateLimited
 * with Retry-After; under credits a Bot's model without a platform price answers 402
 * ModelNotPriced (decision 072, unless the operator set `defaultPrice`). It reserves nothing;
 * every model call reserves its own estimate before it sends, with `max_tokens` fitted to what is
 * left (decision 081), and a Turn admitted with less left than the floor stops at its first call.
 *
 * All of it is one statement (one round trip in the Chat's lock, decision 081), checked in this
 * order. `limited`: whether a budget, rate limit or credit account applies to the scope, as the
 * caller's own read answered it (the Chat's lock carries `anyLimitSql`); false: nothing to check.
 */
export async function checkAdmission(db: Queryable, scope: BillingScope, limited: boolean, defaultPrice: DefaultPrice | null): Promise<void> {
  if (!limited) return;
  const { rows } = await db.query<AdmissionRow>({
    name: 'billing.admission',
    text: `WITH b AS (
             SELECT * FROM budgets
              WHERE organization_id = $1
                AND (scope_kind = 'organization' OR (scope_kind = 'bot' AND scope_id = $4::uuid)
                     OR (scope_kind = 'member' AND $2 = 'member' AND scope_id = $3::uuid))
           ), standing AS (
             SELECT ${STANDING_COLUMNS} FROM b ${STANDING_JOINS}
           ), credits AS (
             ${CREDITS_SQL} FROM credit_accounts WHERE organization_id = $1
           ), buckets AS (
             SELECT ${BUCKET_COLUMNS} FROM rate_limits WHERE ${APPLICABLE_RATE_LIMITS}
           )
           SELECT (SELECT coalesce(json_agg(standing ORDER BY standing.id), '[]'::json) FROM standing) AS budgets,
                  (SELECT row_to_json(credits) FROM credits) AS credits,
                  (SELECT coalesce(json_agg(buckets ORDER BY buckets.id), '[]'::json) FROM buckets) AS buckets,
                  (SELECT m.model FROM bots m
                    WHERE m.id = $4::uuid AND m.organization_id = $1 AND NOT $5::boolean AND EXISTS (SELECT 1 FROM credits)
                      AND NOT EXISTS (SELECT 1 FROM prices p WHERE p.organization_id = $1 AND p.model = m.model AND p.set_by = 'platform' AND p.effective_from <= now())) AS unpriced`,
    values: [scope.organizationId, scope.scopeKind, scope.scopeId, scope.botId, defaultPrice !== null],
  });
  const row = rows[0]!;
  const credits = row.credits === null ? null : { balanceMicros: BigInt(row.credits.balance), reservedMicros: BigInt(row.credits.reserved) };
  const refused = exhausted(row.budgets.map(toStanding), credits, { micros: 0n, tokens: 0n });
  if (refused !== undefined) throw new BudgetExceeded(refused.budgetId);
  // A rate limit with no request left answers 429 with when to retry (LIM-01); admission takes nothing.
  const wait = row.buckets.length === 0 ? null : rateBuckets.plan(row.buckets, 0).waitMs;
  if (wait !== null) throw new RateLimited(Math.ceil(wait / 1000), 'A rate limit of this organization has no model call left for now.');
  // Under credits the Bot's model needs a platform price: nothing is sent at a price of 0 (decision 072).
  if (row.unpriced !== null) throw new ModelNotPriced(row.unpriced);
}

import { BudgetExceeded, ModelNotPriced, RateLimited } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import type { DefaultPrice } from '../config/config';
import { budgetUsage, exhausted, type BillingScope } from './budget-usage';
import { rateBuckets } from './rate-buckets';

/**
 * Admission (PLAT-08): a Turn cannot start, queue or steer once a budget that applies to it or the
 * organization's credits have nothing left (limit − spent − reserved ≤ 0): 402 BudgetExceeded
 * naming the budget (null: the credits); a rate limit with nothing left answers 429 RateLimited
 * with Retry-After. It reserves nothing; every model call reserves its own
 * estimate before it sends, and a Turn admitted with little left stops at its first call that
 * cannot reserve.
 *
 * `limited`: whether a budget, rate limit or credit account applies to the scope, as the
 * caller's own read answered it (the Chat's lock carries `anyLimitSql`); false: nothing to check.
 */
export async function checkAdmission(db: Queryable, scope: BillingScope, limited: boolean): Promise<void> {
  if (!limited) return;
  const budgets = await budgetUsage.applicable(db, scope);
  const credits = await budgetUsage.credits(db, scope.organizationId);
  const refused = exhausted(budgets, credits, { micros: 0n, tokens: 0n });
  if (refused !== undefined) throw new BudgetExceeded(refused.budgetId);
  // A rate limit with no request left answers 429 with when to retry (LIM-01); admission takes nothing.
  const wait = await rateBuckets.take(db, scope, 0, false);
  if (wait !== null) throw new RateLimited(Math.ceil(wait.waitMs / 1000), 'A rate limit of this organization has no model call left for now.');
}

/**
 * Under credits a Bot's model must have a price the platform set (decision 072): otherwise no
 * Turn starts, queues or steers, 402 ModelNotPriced naming the model, and nothing is sent. An
 * operator's default price (OPENBOT_DEFAULT_PRICE) prices every such model. `limited` as for
 * `checkAdmission`: an organization without budgets, rate limits or credits reads nothing here.
 */
export async function checkModelPriced(db: Queryable, organizationId: string, botId: string, limited: boolean, defaultPrice: DefaultPrice | null): Promise<void> {
  if (!limited || defaultPrice !== null) return;
  const { rows } = await db.query<{ model: string }>({
    name: 'billing.model_unpriced',
    text: `SELECT b.model FROM bots b
            WHERE b.id = $2 AND b.organization_id = $1 AND EXISTS (SELECT 1 FROM credit_accounts WHERE organization_id = $1)
              AND NOT EXISTS (SELECT 1 FROM prices p WHERE p.organization_id = $1 AND p.model = b.model AND p.set_by = 'platform' AND p.effective_from <= now())`,
    values: [organizationId, botId],
  });
  const unpriced = rows[0];
  if (unpriced !== undefined) throw new ModelNotPriced(unpriced.model);
}

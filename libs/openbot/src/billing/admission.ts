import { BudgetExceeded } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import { budgetUsage, exhausted, type BillingScope } from './budget-usage';

/**
 * Admission (PLAT-08): a Turn cannot start, queue or steer once a budget that applies to it or the
 * organization's credits have nothing left (limit − spent − reserved ≤ 0): 402 BudgetExceeded
 * naming the budget (null: the credits). It reserves nothing; every model call reserves its own
 * estimate before it sends, and a Turn admitted with little left stops at its first call that
 * cannot reserve.
 */
export async function checkAdmission(db: Queryable, scope: BillingScope): Promise<void> {
  const budgets = await budgetUsage.applicable(db, scope);
  const credits = await budgetUsage.credits(db, scope.organizationId);
  const refused = exhausted(budgets, credits, { micros: 0n, tokens: 0n });
  if (refused !== undefined) throw new BudgetExceeded(refused.budgetId);
}

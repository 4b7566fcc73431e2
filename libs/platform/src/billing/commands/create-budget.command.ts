import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { InvalidInput, newId, type InputIssue, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';
import type { BudgetPeriod, BudgetScopeKind, BudgetView } from '../billing-views';
import { readBudget } from '../queries/get-budget.query';
import { scopeIssues } from '../scope-check';

export interface BudgetInput {
  readonly scope: { readonly kind: BudgetScopeKind; readonly id: string | null };
  readonly period: BudgetPeriod;
  readonly limitMicros: number | null;
  readonly limitTokens: number | null;
}

/**
 * A budget of the organization, one of its Bots or one of its members (PLAT-08): money
 * (`limitMicros`) or a token quota (`limitTokens`), exactly one. It counts all spending of its
 * scope in its period, also from before it was created. A scope ID the organization lacks is
 * 400 on `scope.id`, as an unknown provider is.
 */
export class CreateBudget extends Command<BudgetView> {
  constructor(
    readonly caller: MemberCaller,
    readonly budget: BudgetInput,
  ) {
    super();
  }
}

@CommandHandler(CreateBudget)
export class CreateBudgetHandler implements ICommandHandler<CreateBudget> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, budget }: CreateBudget): Promise<BudgetView> {
    const issues: InputIssue[] = [];
    if ((budget.limitMicros === null) === (budget.limitTokens === null)) {
      issues.push({ path: 'limitMicros', message: 'set exactly one of limitMicros and limitTokens' });
    }
    const { kind, id } = budget.scope;
    issues.push(...(await scopeIssues(this.db, caller.organizationId, budget.scope)));
    if (issues.length > 0) throw new InvalidInput(issues);
    const budgetId = newId();
    await this.db.query(
      `INSERT INTO budgets (id, organization_id, scope_kind, scope_id, period, limit_micros, limit_tokens) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [budgetId, caller.organizationId, kind, id, budget.period, budget.limitMicros, budget.limitTokens],
    );
    return (await readBudget(this.db, caller.organizationId, budgetId))!;
  }
}

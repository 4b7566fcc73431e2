import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';
import type { BudgetView } from '../billing-views';
import { readBudget } from '../queries/get-budget.query';

/** Removes a budget; calls that reserved against it keep their holds until they end. */
export class DeleteBudget extends Command<BudgetView> {
  constructor(
    readonly caller: MemberCaller,
    readonly budgetId: string,
  ) {
    super();
  }
}

@CommandHandler(DeleteBudget)
export class DeleteBudgetHandler implements ICommandHandler<DeleteBudget> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, budgetId }: DeleteBudget): Promise<BudgetView> {
    if (!isUuid(budgetId)) throw new NotFound('Budget');
    return this.db.transaction(async (tx) => {
      const budget = await readBudget(tx, caller.organizationId, budgetId);
      if (budget === null) throw new NotFound('Budget');
      await tx.query('DELETE FROM budgets WHERE id = $1 AND organization_id = $2', [budgetId, caller.organizationId]);
      return budget;
    });
  }
}

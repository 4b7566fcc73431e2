import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../database/sql';
import type { BudgetView } from '../billing-views';
import { readBudgets } from './get-budget.query';

/** The organization's budgets, oldest first, each with its current period's spending. */
export class ListBudgets extends Query<Page<BudgetView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListBudgets)
export class ListBudgetsHandler implements IQueryHandler<ListBudgets> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page }: ListBudgets): Promise<Page<BudgetView>> {
    return toPage(await readBudgets(this.db, caller.organizationId, { after: page.after, limit: page.limit + 1 }), page.limit);
  }
}

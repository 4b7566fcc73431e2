import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { toPage, type Page, type PageRequest } from '@openbot/domain';
import { executionReads, type UnsettledExecution, type UnsettledState } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';

export { UNSETTLED_STATES, type UnsettledExecution, type UnsettledState } from '@openbot/engine';

/**
 * `GET /v1/platform/executions/stuck` (operators): executions of every organization that sit in
 * `waiting`, `outcome_unknown` or `cancelling` since at least `olderThanSeconds`, oldest first,
 * with who owns each and its lease. Read from a partial index of exactly those rows.
 */
export class ListStuckExecutions extends Query<Page<UnsettledExecution>> {
  constructor(
    readonly olderThanSeconds: number,
    readonly states: readonly UnsettledState[],
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListStuckExecutions)
export class ListStuckExecutionsHandler implements IQueryHandler<ListStuckExecutions> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ olderThanSeconds, states, page }: ListStuckExecutions): Promise<Page<UnsettledExecution>> {
    const rows = await executionReads.unsettled(this.db, { olderThanSeconds, states, limit: page.limit + 1, after: page.after });
    return toPage(rows, page.limit);
  }
}

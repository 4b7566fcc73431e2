import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { toPage, type ExecutionState, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { executionReads } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { visibleExecution } from '../execution-access';

export interface ChildExecutionView {
  readonly id: string;
  readonly kind: string;
  readonly state: ExecutionState;
  readonly attached: boolean;
  readonly resource: { readonly type: string; readonly id: string } | null;
}

/** `GET /v1/executions/{id}/children`: the executions it started (its tasks), oldest first. */
export class ListChildren extends Query<Page<ChildExecutionView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly executionId: string,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListChildren)
export class ListChildrenHandler implements IQueryHandler<ListChildren> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, executionId, page }: ListChildren): Promise<Page<ChildExecutionView>> {
    await visibleExecution(this.db, caller, executionId);
    // The children of one execution are few (the calls of its steps): paged after the engine's read.
    const children = (await executionReads.children(this.db, executionId))
      .filter((child) => page.after === null || child.id > page.after)
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .slice(0, page.limit + 1)
      .map(({ id, kind, state, attached, resource }) => ({ id, kind, state, attached, resource }));
    return toPage(children, page.limit);
  }
}

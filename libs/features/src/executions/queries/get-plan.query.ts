import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { visibleExecution } from '../execution-access';

export interface PlanView {
  readonly steps: ReadonlyArray<{ readonly title: string; readonly status: string }>;
  readonly updatedAt: Date;
}

/** `GET /v1/executions/{id}/plan`: the plan its update_plan tool saved last; PlanNotFound while there is none. */
export class GetPlan extends Query<PlanView> {
  constructor(
    readonly caller: MemberCaller,
    readonly executionId: string,
  ) {
    super();
  }
}

@QueryHandler(GetPlan)
export class GetPlanHandler implements IQueryHandler<GetPlan> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, executionId }: GetPlan): Promise<PlanView> {
    await visibleExecution(this.db, caller, executionId);
    const row = await this.db.one<PlanView>('SELECT steps, updated_at AS "updatedAt" FROM execution_plans WHERE execution_id = $1', [executionId]);
    if (row === undefined) throw new NotFound('Plan');
    return row;
  }
}

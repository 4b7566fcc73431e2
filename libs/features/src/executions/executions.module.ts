import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { TurnTools } from '../../../platform/src/turn-core/turn-tool';
import { planTool } from './plan-tool';
import { CancelExecutionHandler } from './commands/cancel-execution.command';
import { DecideExecutionHandler } from './commands/decide-execution.command';
import { GetExecutionHandler } from './queries/get-execution.query';
import { ObserveExecutionHandler } from './queries/observe-execution.query';
import { PauseExecutionHandler } from './commands/pause-execution.command';
import { ResumeExecutionHandler } from './commands/resume-execution.command';
import { ListChildrenHandler } from './queries/list-children.query';
import { GetPlanHandler } from './queries/get-plan.query';
import { ListStuckExecutionsHandler } from './queries/list-stuck-executions.query';

/** Executions as the API reads and steers them, and the built-in `update_plan` tool kind (its plan is an execution's, decision 078). */
@Module({
  providers: [GetExecutionHandler, CancelExecutionHandler, DecideExecutionHandler, ObserveExecutionHandler, PauseExecutionHandler, ResumeExecutionHandler, ListChildrenHandler, GetPlanHandler, ListStuckExecutionsHandler],
})
export class ExecutionsModule implements OnModuleInit {
  constructor(@Inject(TurnTools) private readonly tools: TurnTools) {}

  /** The built-in `update_plan` tool: the plan is an execution's (`GET /v1/executions/{id}/plan`). */
  onModuleInit(): void {
    this.tools.register(planTool);
  }
}

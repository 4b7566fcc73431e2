import { Module } from '@nestjs/common';
import { CancelExecutionHandler } from './commands/cancel-execution.command';
import { DecideExecutionHandler } from './commands/decide-execution.command';
import { GetExecutionHandler } from './queries/get-execution.query';
import { ObserveExecutionHandler } from './queries/observe-execution.query';
import { PauseExecutionHandler } from './commands/pause-execution.command';
import { ResumeExecutionHandler } from './commands/resume-execution.command';
import { ListChildrenHandler } from './queries/list-children.query';
import { GetPlanHandler } from './queries/get-plan.query';
import { ListStuckExecutionsHandler } from './queries/list-stuck-executions.query';

@Module({
  providers: [GetExecutionHandler, CancelExecutionHandler, DecideExecutionHandler, ObserveExecutionHandler, PauseExecutionHandler, ResumeExecutionHandler, ListChildrenHandler, GetPlanHandler, ListStuckExecutionsHandler],
})
export class ExecutionsModule {}

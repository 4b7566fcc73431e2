import { Module } from '@nestjs/common';
import { CancelExecutionHandler } from './commands/cancel-execution.command';
import { DecideExecutionHandler } from './commands/decide-execution.command';
import { GetExecutionHandler } from './queries/get-execution.query';
import { ObserveExecutionHandler } from './queries/observe-execution.query';

@Module({ providers: [GetExecutionHandler, CancelExecutionHandler, DecideExecutionHandler, ObserveExecutionHandler] })
export class ExecutionsModule {}

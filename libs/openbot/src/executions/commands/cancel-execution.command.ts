import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { NotFound, type ExecutionState, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../database/sql';
import { assertExecutionVisible } from '../execution-access';

/** A cancel request: enters `cancelling` unless final; a final execution answers its state unchanged (EXE-12). */
export class CancelExecution extends Command<{ id: string; state: ExecutionState }> {
  constructor(
    readonly caller: MemberCaller,
    readonly executionId: string,
  ) {
    super();
  }
}

@CommandHandler(CancelExecution)
export class CancelExecutionHandler implements ICommandHandler<CancelExecution> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, executionId }: CancelExecution): Promise<{ id: string; state: ExecutionState }> {
    await assertExecutionVisible(this.db, caller, executionId);
    const outcome = await this.engine.cancel(executionId);
    if (outcome === null) throw new NotFound('Execution');
    return { id: executionId, state: outcome.state };
  }
}

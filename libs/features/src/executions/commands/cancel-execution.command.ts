import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { NotFound, type Caller, type ExecutionState } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { authorizeExecutionAction } from '../execution-access';

/**
 * A cancel request: enters `cancelling` unless final; a final execution answers its state unchanged (EXE-12).
 * A member cancels what it can see; the platform operator any execution, recorded in its audit log.
 */
export class CancelExecution extends Command<{ id: string; state: ExecutionState }> {
  constructor(
    readonly caller: Caller,
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
    await authorizeExecutionAction(this.db, caller, executionId, 'cancel', {});
    const outcome = await this.engine.cancel(executionId);
    if (outcome === null) throw new NotFound('Execution');
    return { id: executionId, state: outcome.state };
  }
}

import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { NotFound, type Caller, type ExecutionState } from '@openbot/domain';
import { Engine, type Json, type OperatorDecision } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { authorizeExecutionAction } from '../execution-access';

/**
 * Resolves an execution waiting in `outcome_unknown` (CALL-03, RES-02): `succeeded` saves the
 * given result as the lost call's result and resumes; `failed` fails it; `stop` cancels it.
 * Any other state is a 409 conflict. Only the execution's actor, an owner or an admin may decide,
 * or the platform operator (recorded in the execution's audit log; the result is not).
 */
export class DecideExecution extends Command<{ id: string; state: ExecutionState }> {
  constructor(
    readonly caller: Caller,
    readonly executionId: string,
    readonly decision: 'succeeded' | 'failed' | 'stop',
    readonly result: Json | undefined,
  ) {
    super();
  }
}

@CommandHandler(DecideExecution)
export class DecideExecutionHandler implements ICommandHandler<DecideExecution> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, executionId, decision, result }: DecideExecution): Promise<{ id: string; state: ExecutionState }> {
    await authorizeExecutionAction(this.db, caller, executionId, 'decide', { decision });
    const choice: OperatorDecision = decision === 'succeeded' ? { decision, result: result ?? null } : { decision };
    const outcome = await this.engine.decide(executionId, choice);
    if (outcome === null) throw new NotFound('Execution');
    return { id: executionId, state: outcome.state };
  }
}

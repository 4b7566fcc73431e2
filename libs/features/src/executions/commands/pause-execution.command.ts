import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Conflict, isFinal, type ExecutionState, type MemberCaller } from '@openbot/domain';
import { Engine, executionReads } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { assertExecutionSteerable, visibleExecution } from '../execution-access';
import { openPause } from '../pause-time';

/**
 * Pauses an execution and its attached tasks (TASK-02): no new sends, the running phase's
 * resources released, and it waits until resumed; its time does not count meanwhile (TASK-03).
 * A final execution is 409 ExecutionFinal; pausing a paused one changes nothing. A paused
 * execution can still be cancelled, and a decision on its approvals is recorded and acted on after
 * the resume.
 */
export class PauseExecution extends Command<{ id: string; state: ExecutionState; paused: boolean }> {
  constructor(
    readonly caller: MemberCaller,
    readonly executionId: string,
  ) {
    super();
  }
}

@CommandHandler(PauseExecution)
export class PauseExecutionHandler implements ICommandHandler<PauseExecution> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, executionId }: PauseExecution): Promise<{ id: string; state: ExecutionState; paused: boolean }> {
    const execution = await visibleExecution(this.db, caller, executionId);
    await assertExecutionSteerable(this.db, caller, executionId);
    if (isFinal(execution.state)) throw new Conflict('ExecutionFinal', `This execution is ${execution.state}: there is nothing to pause.`);
    // The tasks first: none of them sends anything once its parent is paused.
    for (const task of await attachedTasks(this.db, executionId)) await this.pauseOne(task);
    const outcome = await this.pauseOne(executionId);
    return { id: executionId, state: outcome?.state ?? execution.state, paused: outcome?.paused ?? false };
  }

  private async pauseOne(id: string): Promise<{ state: ExecutionState; paused: boolean } | null> {
    await openPause(this.db, id, this.engine.clock.now());
    return this.engine.pause(id);
  }
}

/** Every attached task under an execution that has not ended, depth first (attached tasks of tasks too). */
export async function attachedTasks(db: Database, executionId: string): Promise<string[]> {
  const found: string[] = [];
  for (const child of await executionReads.children(db, executionId)) {
    if (!child.attached || isFinal(child.state)) continue;
    found.push(...(await attachedTasks(db, child.id)), child.id);
  }
  return found;
}

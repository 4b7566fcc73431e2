import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Conflict, isFinal, type ExecutionState, type MemberCaller } from '@openbot/domain';
import { Engine, executionReads } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { assertExecutionSteerable, visibleExecution } from '../execution-access';
import { closePause } from '../pause-time';
import { attachedTasks } from './pause-execution.command';

/**
 * Resumes a paused execution and its attached tasks: it continues from its saved state. A task
 * whose parent is still paused is 409 ParentPaused: a review may answer its own pause, never a
 * parent's (TASK-02). A final execution is 409 ExecutionFinal; resuming a running one changes
 * nothing. The pause's length is saved before the resume, so the work's time leaves it out.
 */
export class ResumeExecution extends Command<{ id: string; state: ExecutionState; paused: boolean }> {
  constructor(
    readonly caller: MemberCaller,
    readonly executionId: string,
  ) {
    super();
  }
}

@CommandHandler(ResumeExecution)
export class ResumeExecutionHandler implements ICommandHandler<ResumeExecution> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, executionId }: ResumeExecution): Promise<{ id: string; state: ExecutionState; paused: boolean }> {
    const execution = await visibleExecution(this.db, caller, executionId);
    await assertExecutionSteerable(this.db, caller, executionId);
    if (isFinal(execution.state)) throw new Conflict('ExecutionFinal', `This execution is ${execution.state}: there is nothing to resume.`);
    if (execution.attached && execution.parentId !== null) {
      const parent = await executionReads.byId(this.db, execution.parentId);
      if (parent?.paused === true) throw new Conflict('ParentPaused', 'The parent of this task is paused: resume the parent.');
    }
    const outcome = await this.resumeOne(executionId);
    for (const task of (await attachedTasks(this.db, executionId)).reverse()) await this.resumeOne(task);
    return { id: executionId, state: outcome?.state ?? execution.state, paused: false };
  }

  private async resumeOne(id: string): Promise<{ state: ExecutionState; resumed: boolean } | null> {
    await closePause(this.db, id, this.engine.clock.now());
    return this.engine.resume(id);
  }
}

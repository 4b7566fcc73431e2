import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { ExecutionState, MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { visibleExecution } from '../execution-access';
import { executionSpend, type ExecutionSpend } from '../execution-spend';

export interface ExecutionDetails extends ExecutionSpend {
  readonly id: string;
  readonly kind: string;
  readonly state: ExecutionState;
  readonly generation: number;
  readonly resource: { readonly type: string; readonly id: string } | null;
  readonly paused: boolean;
  readonly errorId: string | null;
  readonly category: string | null;
}

/** `GET /v1/executions/{id}`: safe fields only, read through the engine's read API (ARCH-05: no service in between) with the access rule in its SQL. */
export class GetExecution extends Query<ExecutionDetails> {
  constructor(
    readonly caller: MemberCaller,
    readonly executionId: string,
  ) {
    super();
  }
}

@QueryHandler(GetExecution)
export class GetExecutionHandler implements IQueryHandler<GetExecution> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, executionId }: GetExecution): Promise<ExecutionDetails> {
    const { id, kind, state, generation, resource, paused, errorId, category } = await visibleExecution(this.db, caller, executionId);
    const spend = await executionSpend(this.db, { id, state, category }, this.engine.clock.now());
    return { id, kind, state, generation, resource, paused, errorId, category, ...spend };
  }
}

import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { ExecutionState, MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { failureDetailOf, type FailureDetail } from '../../../../platform/src/errors/error-detail';
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
  /** A failure a model provider answered: its status, error code and scrubbed message (decision 082); null otherwise. */
  readonly detail: FailureDetail | null;
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
    const [spend, detail] = await Promise.all([
      executionSpend(this.db, { id, state, category }, this.engine.clock.now()),
      state === 'failed' && errorId !== null ? failureDetailOf(this.db, errorId) : null,
    ]);
    return { id, kind, state, generation, resource, paused, errorId, category, detail, ...spend };
  }
}

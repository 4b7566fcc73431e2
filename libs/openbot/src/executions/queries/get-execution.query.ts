import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type ExecutionState, type MemberCaller } from '@openbot/domain';
import { DataSource } from 'typeorm';

export interface ExecutionDetails {
  readonly id: string;
  readonly kind: string;
  readonly state: ExecutionState;
  readonly generation: number;
  readonly resource: { readonly type: string; readonly id: string } | null;
  readonly errorId: string | null;
  readonly category: string | null;
}

/** `GET /v1/executions/{id}`: safe fields only, read directly (ARCH-05) with the access rule in SQL. */
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
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async execute({ caller, executionId }: GetExecution): Promise<ExecutionDetails> {
    if (!isUuid(executionId)) throw new NotFound('Execution');
    const [row] = (await this.dataSource.query(
      `SELECT id, workflow, state, generation, resource_type, resource_id, error_id, category
         FROM executions WHERE id = $1 AND organization_id = $2`,
      [executionId, caller.organizationId],
    )) as Array<{
      id: string;
      workflow: string;
      state: ExecutionState;
      generation: number;
      resource_type: string | null;
      resource_id: string | null;
      error_id: string | null;
      category: string | null;
    }>;
    if (!row) throw new NotFound('Execution');
    return {
      id: row.id,
      kind: row.workflow,
      state: row.state,
      generation: row.generation,
      resource: row.resource_type !== null && row.resource_id !== null ? { type: row.resource_type, id: row.resource_id } : null,
      errorId: row.error_id,
      category: row.category,
    };
  }
}

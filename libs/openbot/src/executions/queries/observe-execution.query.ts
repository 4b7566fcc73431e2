import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import { Engine, type ExecutionEvent } from '@openbot/engine';
import { Database } from '../../database/sql';
import { assertExecutionVisible } from '../execution-access';

/**
 * The events of an execution after a cursor, as an async iterable the SSE and long-poll routes
 * consume (EVT-03). Closing it stops reading; it never cancels the execution (RES-03).
 */
export class ObserveExecution extends Query<AsyncIterable<ExecutionEvent>> {
  constructor(
    readonly caller: MemberCaller,
    readonly executionId: string,
    readonly after: number,
    readonly signal: AbortSignal,
    /** false: end once caught up instead of waiting for more. */
    readonly follow = true,
  ) {
    super();
  }
}

@QueryHandler(ObserveExecution)
export class ObserveExecutionHandler implements IQueryHandler<ObserveExecution> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, executionId, after, signal, follow }: ObserveExecution): Promise<AsyncIterable<ExecutionEvent>> {
    await assertExecutionVisible(this.db, caller, executionId);
    return this.engine.observe(executionId, after, signal, follow);
  }
}

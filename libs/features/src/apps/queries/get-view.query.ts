import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';

/** A View's binding as its member reads it (404 for anyone else, and once its connection is deleted). */
export async function ownView(db: Database, caller: MemberCaller, viewId: string): Promise<{ id: string; connectionId: string; toolName: string; uri: string; revision: number; createdAt: Date }> {
  const view = isUuid(viewId)
    ? await db.one<{ id: string; connectionId: string; toolName: string; uri: string; revision: number; createdAt: Date }>(
        `SELECT v.id, v.connection_id AS "connectionId", v.tool_name AS "toolName", v.uri, v.revision, v.created_at AS "createdAt"
           FROM app_views v JOIN app_connections c ON c.id = v.connection_id
          WHERE v.id = $1 AND v.organization_id = $2 AND v.member_id = $3 AND c.deleting_at IS NULL`,
        [viewId, caller.organizationId, caller.memberId],
      )
    : undefined;
  if (view === undefined) throw new NotFound('View');
  return view;
}

/** What a View's tool call came to. */
export interface ViewCallOutcome {
  readonly executionId: string;
  readonly state: string;
  /** Once it completed: the tool's answer. */
  readonly result: { readonly isError: boolean; readonly text: string } | null;
  readonly category: string | null;
  readonly errorId: string | null;
}

/** A View's binding (`GET /v1/views/{id}`): only its member sees it. */
export class GetView extends Query<Awaited<ReturnType<typeof ownView>>> {
  constructor(
    readonly caller: MemberCaller,
    readonly viewId: string,
  ) {
    super();
  }
}

@QueryHandler(GetView)
export class GetViewHandler implements IQueryHandler<GetView> {
  constructor(@Inject(Database) private readonly db: Database) {}

  execute({ caller, viewId }: GetView): ReturnType<typeof ownView> {
    return ownView(this.db, caller, viewId);
  }
}

/** One tool call of a View (`GET /v1/views/{id}/calls/{executionId}`): its state and, once completed, its answer. */
export class GetViewCall extends Query<ViewCallOutcome> {
  constructor(
    readonly caller: MemberCaller,
    readonly viewId: string,
    readonly executionId: string,
  ) {
    super();
  }
}

@QueryHandler(GetViewCall)
export class GetViewCallHandler implements IQueryHandler<GetViewCall> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, viewId, executionId }: GetViewCall): Promise<ViewCallOutcome> {
    await ownView(this.db, caller, viewId);
    const execution = isUuid(executionId) ? await this.engine.get(executionId) : null;
    if (execution === null || execution.resource?.type !== 'app-view' || execution.resource.id !== viewId) throw new NotFound('ViewCall');
    const saved = execution.state === 'completed' ? ((await this.engine.result(executionId)) as { modelOutput?: unknown; isError?: unknown; failure?: { category?: unknown; errorId?: unknown } } | undefined) : undefined;
    const failure = saved?.failure;
    return {
      executionId,
      state: execution.state,
      result: saved === undefined ? null : { isError: saved.isError === true, text: typeof saved.modelOutput === 'string' ? saved.modelOutput : '' },
      category: typeof failure?.category === 'string' ? failure.category : (execution.category ?? null),
      errorId: typeof failure?.errorId === 'string' ? failure.errorId : (execution.errorId ?? null),
    };
  }
}

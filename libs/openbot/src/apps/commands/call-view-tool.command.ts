import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../database/sql';
import { VIEW_CALL } from '../view-call.workflow';

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

/**
 * A tool call from a View (`POST /v1/views/{id}/calls`): an execution of its own (FW-05) that
 * goes through the checks of a model's call (see view-call.workflow.ts). Answers its execution ID
 * at once; `GET /v1/views/{id}/calls/{executionId}` reads its outcome.
 */
export class CallViewTool extends Command<{ readonly executionId: string }> {
  constructor(
    readonly caller: MemberCaller,
    readonly viewId: string,
    readonly name: string,
    readonly args: Record<string, unknown>,
  ) {
    super();
  }
}

@CommandHandler(CallViewTool)
export class CallViewToolHandler implements ICommandHandler<CallViewTool> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, viewId, name, args }: CallViewTool): Promise<{ executionId: string }> {
    await ownView(this.db, caller, viewId);
    const { executionId } = await this.engine.submit({
      ...VIEW_CALL.command({ viewId, organizationId: caller.organizationId, memberId: caller.memberId, name, arguments: JSON.stringify(args) }),
      scope: { kind: 'member', id: caller.memberId, organizationId: caller.organizationId },
      resource: { type: 'app-view', id: viewId },
    });
    return { executionId };
  }
}

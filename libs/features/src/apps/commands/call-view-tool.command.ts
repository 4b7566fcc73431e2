import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { ownView } from '../queries/get-view.query';
import { VIEW_CALL } from '../view-call.workflow';

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

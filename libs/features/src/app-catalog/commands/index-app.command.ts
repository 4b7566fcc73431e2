import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { appNotFound } from '../../apps/app-failures';
import { Database } from '../../../../platform/src/database/sql';
import { APP_INDEX } from '../app-index.workflow';

/** Crawls an App into the organization's index, as an execution command: the answer is its execution ID. */
export class IndexApp extends Command<{ readonly executionId: string }> {
  constructor(
    readonly caller: MemberCaller,
    readonly appId: string,
  ) {
    super();
  }
}

@CommandHandler(IndexApp)
export class IndexAppHandler implements ICommandHandler<IndexApp> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, appId }: IndexApp): Promise<{ executionId: string }> {
    if (!isUuid(appId)) throw appNotFound();
    const executionId = await this.db.transaction(async (tx) => {
      const app = await tx.one('SELECT 1 FROM apps WHERE id = $1 AND organization_id = $2 FOR SHARE', [appId, caller.organizationId]);
      if (app === undefined) throw appNotFound();
      return this.engine.in(tx).submit({
        ...APP_INDEX.command({ appId, organizationId: caller.organizationId, memberId: caller.memberId }),
        scope: { kind: 'member', id: caller.memberId, organizationId: caller.organizationId },
        resource: { type: 'app', id: appId },
      });
    });
    return { executionId };
  }
}

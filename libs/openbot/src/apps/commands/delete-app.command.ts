import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';
import { AppHasConnections, appNotFound } from '../app-failures';
import { APP_VIEW_COLUMNS, type AppView } from '../app-view';

/** Deletes an App of the organization; 409 AppHasConnections while any connection (even one being cleaned up) names it. */
export class DeleteApp extends Command<AppView> {
  constructor(
    readonly caller: MemberCaller,
    readonly appId: string,
  ) {
    super();
  }
}

@CommandHandler(DeleteApp)
export class DeleteAppHandler implements ICommandHandler<DeleteApp> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, appId }: DeleteApp): Promise<AppView> {
    if (!isUuid(appId)) throw appNotFound();
    return this.db.transaction(async (tx) => {
      const app = await tx.one<AppView>(`SELECT ${APP_VIEW_COLUMNS} FROM apps WHERE id = $1 AND organization_id = $2 FOR UPDATE`, [appId, caller.organizationId]);
      if (app === undefined) throw appNotFound();
      // A new connection takes `FOR SHARE` on the App row, so none can slip in between.
      const connections = await tx.one<{ n: number }>('SELECT count(*)::int AS n FROM app_connections WHERE app_id = $1', [appId]);
      if (connections!.n > 0) throw new AppHasConnections();
      await tx.count('DELETE FROM apps WHERE id = $1', [appId]);
      return app;
    });
  }
}

import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { AppHasConnections, appNotFound } from '../app-failures';
import { APP_VIEW_COLUMNS, type AppView } from '../app-view';
import { ConnectionGrants } from '../connection-grants';

/**
 * Deletes an App of the organization; 409 AppHasConnections while any connection (even one being
 * cleaned up) names it. Its developer tests go with it: their grants to cleanup, their runs cancelled.
 */
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
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
    @Inject(ConnectionGrants) private readonly grants: ConnectionGrants,
  ) {}

  async execute({ caller, appId }: DeleteApp): Promise<AppView> {
    if (!isUuid(appId)) throw appNotFound();
    const after: Array<() => Promise<unknown> | void> = [];
    const deleted = await this.db.transaction(async (tx) => {
      const app = await tx.one<AppView>(`SELECT ${APP_VIEW_COLUMNS} FROM apps WHERE id = $1 AND organization_id = $2 FOR UPDATE`, [appId, caller.organizationId]);
      if (app === undefined) throw appNotFound();
      // A new connection takes `FOR SHARE` on the App row, so none can slip in between.
      const connections = await tx.one<{ n: number }>('SELECT count(*)::int AS n FROM app_connections WHERE app_id = $1', [appId]);
      if (connections!.n > 0) throw new AppHasConnections();
      // Its developer tests go with it (DEVT-01): a developer's grant goes to cleanup, which waits for the test's run to end (GRANT-03, GRANT-05).
      const tests = await tx.rows<{ id: string; execution_id: string; state: string; secrets_record_id: string | null }>(
        'SELECT id, execution_id, state, secrets_record_id FROM app_developer_tests WHERE app_id = $1 FOR UPDATE',
        [appId],
      );
      for (const test of tests) {
        await this.grants.handOver(tx, this.engine.in(tx), test.id, 'removed', test.execution_id);
        if (test.state === 'running' || test.state === 'needs_authorization') after.push(() => this.engine.cancel(test.execution_id));
      }
      await tx.count('DELETE FROM apps WHERE id = $1', [appId]);
      for (const test of tests) if (test.secrets_record_id !== null) await tx.count('DELETE FROM sealed_records WHERE id = $1', [test.secrets_record_id]);
      return app;
    });
    for (const step of after) await step();
    return deleted;
  }
}

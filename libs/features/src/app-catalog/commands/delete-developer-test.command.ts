import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { handOverGrant } from '../../app-oauth/grant-cleanup-command';
import { Database } from '../../../../platform/src/database/sql';

/**
 * Removes a developer test (DEVT-01). In one transaction: the developer's grant goes to service
 * cleanup (GRANT-05: its holder row goes with it), whose revocation waits for the test's run to
 * end, so a connection the run still holds open is closed first (GRANT-03); the test's sealed
 * values and its unused sign-in requests go with the row. A run still going is cancelled after
 * the commit.
 */
export class DeleteDeveloperTest extends Command<{ readonly id: string }> {
  constructor(
    readonly caller: MemberCaller,
    readonly appId: string,
    readonly testId: string,
  ) {
    super();
  }
}

@CommandHandler(DeleteDeveloperTest)
export class DeleteDeveloperTestHandler implements ICommandHandler<DeleteDeveloperTest> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, appId, testId }: DeleteDeveloperTest): Promise<{ id: string }> {
    if (!isUuid(appId) || !isUuid(testId)) throw new NotFound('DeveloperTest');
    const test = await this.db.transaction(async (tx) => {
      const row = await tx.one<{ execution_id: string; state: string; secrets_record_id: string | null }>(
        'SELECT execution_id, state, secrets_record_id FROM app_developer_tests WHERE id = $1 AND app_id = $2 AND organization_id = $3 FOR UPDATE',
        [testId, appId, caller.organizationId],
      );
      if (row === undefined) throw new NotFound('DeveloperTest');
      await handOverGrant(tx, this.engine.in(tx), testId, 'removed', row.execution_id);
      await tx.count('DELETE FROM app_developer_tests WHERE id = $1', [testId]);
      if (row.secrets_record_id !== null) await tx.count('DELETE FROM sealed_records WHERE id = $1', [row.secrets_record_id]);
      return row;
    });
    if (test.state === 'running' || test.state === 'needs_authorization') await this.engine.cancel(test.execution_id);
    return { id: testId };
  }
}

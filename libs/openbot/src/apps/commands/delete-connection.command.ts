import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { canSteerOthersWork, isUuid, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../database/sql';
import { connectionNotFound } from '../app-failures';
import { VISIBLE_CONNECTION } from '../app-view';
import { CONNECTION_CLEANUP } from '../connection-cleanup.workflow';
import { assertMayChange } from './check-connection.command';

/**
 * Deletes a connection (`DELETE /v1/connections/{id}` → 202): admission closes now (the
 * connection answers 404, and a Turn's next call of it fails clearly), and an
 * `app.connection.cleanup` execution closes its physical scopes and removes its rows (RES-07).
 */
export class DeleteConnection extends Command<{ readonly executionId: string }> {
  constructor(
    readonly caller: MemberCaller,
    readonly connectionId: string,
  ) {
    super();
  }
}

@CommandHandler(DeleteConnection)
export class DeleteConnectionHandler implements ICommandHandler<DeleteConnection> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, connectionId }: DeleteConnection): Promise<{ executionId: string }> {
    if (!isUuid(connectionId)) throw connectionNotFound();
    let start: () => void = () => undefined;
    const executionId = await this.db.transaction(async (tx) => {
      const row = await tx.one<{ owner: string }>(`SELECT owner FROM app_connections WHERE ${VISIBLE_CONNECTION} AND id = $4 FOR UPDATE`, [
        caller.organizationId,
        caller.memberId,
        canSteerOthersWork(caller),
        connectionId,
      ]);
      if (row === undefined) throw connectionNotFound();
      assertMayChange(caller, row.owner);
      await tx.count('UPDATE app_connections SET deleting_at = now() WHERE id = $1', [connectionId]);
      const submitted = await this.engine.submitIn(
        tx,
        {
          ...CONNECTION_CLEANUP.command({ connectionId }),
          scope: { kind: 'member', id: caller.memberId, organizationId: caller.organizationId },
          resource: { type: 'app-connection', id: connectionId },
        },
        { held: false },
      );
      start = submitted.start;
      return submitted.executionId;
    });
    start();
    return { executionId };
  }
}

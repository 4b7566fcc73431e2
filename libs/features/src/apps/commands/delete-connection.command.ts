import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { lockChangeableConnection } from '../changeable-connection';
import { recordAudit } from '../../../../platform/src/audit/record-audit';
import { CONNECTION_CLEANUP } from '../connection-cleanup.workflow';

/**
 * Deletes a connection (`DELETE /v1/connections/{id}` → 202): admission closes now (the
 * connection answers 404, and a Turn's next call of it fails clearly), and an
 * `app.connection.cleanup` execution closes its physical scopes and removes its rows (RES-07),
 * handing its OAuth grant to service cleanup in its end transaction.
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
    const executionId = await this.db.transaction(async (tx) => {
      await lockChangeableConnection(tx, caller, connectionId, 'update');
      await tx.count('UPDATE app_connections SET deleting_at = now() WHERE id = $1', [connectionId]);
      await recordAudit(tx, { organizationId: caller.organizationId, actor: caller, action: 'app-connection.deleted', target: { type: 'app-connection', id: connectionId } });
      // Its OAuth grant stays until the cleanup has ended its sessions (their DELETEs carry its token); that cleanup's end hands it over (GRANT-03).
      return this.engine.in(tx).submit({
        ...CONNECTION_CLEANUP.command({ connectionId, memberId: caller.memberId }),
        scope: { kind: 'member', id: caller.memberId, organizationId: caller.organizationId },
        resource: { type: 'app-connection', id: connectionId },
      });
    });
    return { executionId };
  }
}

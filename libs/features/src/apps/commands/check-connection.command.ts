import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { lockChangeableConnection } from '../changeable-connection';
import { CONNECTION_CHECK } from '../connection-check.workflow';

/**
 * Revalidates a connection as an execution command (CONN-01): `POST /v1/connections/{id}/check`
 * answers its execution ID at once; the connection's `state` and `revision` show the outcome.
 * An organization connection needs `apps.manage`; a member may check its own.
 */
export class CheckConnection extends Command<{ readonly executionId: string }> {
  constructor(
    readonly caller: MemberCaller,
    readonly connectionId: string,
  ) {
    super();
  }
}

@CommandHandler(CheckConnection)
export class CheckConnectionHandler implements ICommandHandler<CheckConnection> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, connectionId }: CheckConnection): Promise<{ executionId: string }> {
    const executionId = await this.db.transaction(async (tx) => {
      await lockChangeableConnection(tx, caller, connectionId, 'share');
      return this.engine.in(tx).submit({
        ...CONNECTION_CHECK.command({ connectionId, organizationId: caller.organizationId, memberId: caller.memberId }),
        scope: { kind: 'member', id: caller.memberId, organizationId: caller.organizationId },
        resource: { type: 'app-connection', id: connectionId },
      });
    });
    return { executionId };
  }
}

import { Inject } from '@nestjs/common';
import { Command, CommandHandler, QueryBus, type ICommandHandler } from '@nestjs/cqrs';
import { Conflict, isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { BOT_VIEW_COLUMNS, type BotView } from '../bot-view';
import { BotKeptByChats } from '../queries/bot-kept-by-chats.query';
import { headerSecretRecords } from '../tool-header-secrets';

/**
 * Deletes a Bot of the caller's organization and answers what was deleted.
 * A malformed, unknown or other organization's ID is NotFound, all alike (IDN-08).
 * A Bot with Chats is kept (the foreign key restricts the delete): 409 BotHasChats.
 */
export class DeleteBot extends Command<BotView> {
  constructor(
    readonly caller: MemberCaller,
    readonly id: string,
  ) {
    super();
  }
}

@CommandHandler(DeleteBot)
export class DeleteBotHandler implements ICommandHandler<DeleteBot> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  async execute({ caller, id }: DeleteBot): Promise<BotView> {
    if (!isUuid(id)) throw new NotFound('Bot');
    let row: BotView | undefined;
    try {
      row = await this.db.transaction(async (tx) => {
        const deleted = await tx.one<BotView>(`DELETE FROM bots WHERE id = $1 AND organization_id = $2 RETURNING ${BOT_VIEW_COLUMNS}`, [id, caller.organizationId]);
        // The sealed literal header values go with their Bot (decision 036).
        const records = deleted === undefined ? [] : headerSecretRecords(deleted.tools);
        if (records.length > 0) await tx.count('DELETE FROM sealed_records WHERE id = ANY($1::uuid[])', [records]);
        return deleted;
      });
    } catch (error) {
      // The foreign key is checked in the same statement, so a Chat created concurrently counts too.
      if (await this.queries.execute(new BotKeptByChats(error))) throw new Conflict('BotHasChats', 'This Bot has Chats and cannot be deleted.');
      throw error;
    }
    if (row === undefined) throw new NotFound('Bot');
    return row;
  }
}

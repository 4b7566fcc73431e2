import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { DataSource } from 'typeorm';
import { BOT_VIEW_COLUMNS, type BotView } from '../bot-view';

/**
 * Deletes a Bot of the caller's organization and answers what was deleted.
 * A malformed, unknown or other organization's ID is NotFound, all alike (IDN-08).
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
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async execute({ caller, id }: DeleteBot): Promise<BotView> {
    if (!isUuid(id)) throw new NotFound('Bot');
    const [rows] = (await this.dataSource.query(`DELETE FROM bots WHERE id = $1 AND organization_id = $2 RETURNING ${BOT_VIEW_COLUMNS}`, [
      id,
      caller.organizationId,
    ])) as [BotView[], number];
    const row = rows[0];
    if (row === undefined) throw new NotFound('Bot');
    return row;
  }
}

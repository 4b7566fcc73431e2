import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { BOT_VIEW_COLUMNS, type BotView } from '../bot-view';

/** One Bot of the caller's organization; malformed, unknown and foreign IDs are NotFound alike (IDN-08). */
export class GetBot extends Query<BotView> {
  constructor(
    readonly caller: MemberCaller,
    readonly id: string,
  ) {
    super();
  }
}

@QueryHandler(GetBot)
export class GetBotHandler implements IQueryHandler<GetBot> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, id }: GetBot): Promise<BotView> {
    if (!isUuid(id)) throw new NotFound('Bot');
    const row = await this.db.one<BotView>(`SELECT ${BOT_VIEW_COLUMNS} FROM bots WHERE id = $1 AND organization_id = $2`, [id, caller.organizationId]);
    if (row === undefined) throw new NotFound('Bot');
    return row;
  }
}

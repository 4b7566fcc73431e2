import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { BOT_VIEW_COLUMNS, type BotView } from '../bot-view';

/** The caller's organization's Bots, oldest first. */
export class ListBots extends Query<Page<BotView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListBots)
export class ListBotsHandler implements IQueryHandler<ListBots> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page }: ListBots): Promise<Page<BotView>> {
    // The organization is in the WHERE clause, never a filter after the read (IDN-08).
    const rows = await this.db.rows<BotView>(
      `SELECT ${BOT_VIEW_COLUMNS} FROM bots
        WHERE organization_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid)
        ORDER BY id LIMIT $3`,
      [caller.organizationId, page.after, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { InvalidInput, isUuid, toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { CHAT_VIEW_COLUMNS, type ChatView } from '../chat-view';

/**
 * The caller's organization's Chats, oldest first, optionally only those of one Bot.
 * A `botId` that is no UUID is an InvalidInput on `botId`; an unknown or foreign Bot lists nothing.
 */
export class ListChats extends Query<Page<ChatView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
    readonly botId: string | null,
  ) {
    super();
  }
}

@QueryHandler(ListChats)
export class ListChatsHandler implements IQueryHandler<ListChats> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page, botId }: ListChats): Promise<Page<ChatView>> {
    if (botId !== null && !isUuid(botId)) throw new InvalidInput([{ path: 'botId', message: 'botId must be a UUID' }]);
    // The organization is in the WHERE clause, never a filter after the read (IDN-08).
    const rows = await this.db.rows<ChatView>(
      `SELECT ${CHAT_VIEW_COLUMNS} FROM chats
        WHERE organization_id = $1 AND closed_at IS NULL AND ($2::uuid IS NULL OR id > $2::uuid) AND ($3::uuid IS NULL OR bot_id = $3::uuid)
        ORDER BY id LIMIT $4`,
      [caller.organizationId, page.after, botId, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { CHAT_VIEW_COLUMNS, type ChatView } from '../chat-view';

/** One Chat of the caller's organization; malformed, unknown and foreign IDs are NotFound alike (IDN-08). */
export class GetChat extends Query<ChatView> {
  constructor(
    readonly caller: MemberCaller,
    readonly id: string,
  ) {
    super();
  }
}

@QueryHandler(GetChat)
export class GetChatHandler implements IQueryHandler<GetChat> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, id }: GetChat): Promise<ChatView> {
    if (!isUuid(id)) throw new NotFound('Chat');
    const row = await this.db.one<ChatView>(`SELECT ${CHAT_VIEW_COLUMNS} FROM chats WHERE id = $1 AND organization_id = $2 AND closed_at IS NULL`, [
      id,
      caller.organizationId,
    ]);
    if (row === undefined) throw new NotFound('Chat');
    return row;
  }
}

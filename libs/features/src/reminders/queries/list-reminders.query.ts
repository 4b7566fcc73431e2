import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { InvalidInput, isUuid, toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { REMINDER_VIEW_COLUMNS, type ReminderView } from '../reminder-view';

/**
 * The organization's reminders, oldest first (ascending UUIDv7 `id`), optionally of one Chat.
 * The organization is in the query (IDN-08): another organization's Chat lists nothing.
 */
export class ListReminders extends Query<Page<ReminderView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly chatId: string | undefined,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListReminders)
export class ListRemindersHandler implements IQueryHandler<ListReminders> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, chatId, page }: ListReminders): Promise<Page<ReminderView>> {
    if (chatId !== undefined && !isUuid(chatId)) throw new InvalidInput([{ path: 'chatId', message: 'chatId must be a Chat ID' }]);
    const rows = await this.db.rows<ReminderView>(
      `SELECT ${REMINDER_VIEW_COLUMNS} FROM reminders
        WHERE organization_id = $1 AND ($2::uuid IS NULL OR chat_id = $2::uuid) AND ($3::uuid IS NULL OR id > $3::uuid)
        ORDER BY id LIMIT $4`,
      [caller.organizationId, chatId ?? null, page.after, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

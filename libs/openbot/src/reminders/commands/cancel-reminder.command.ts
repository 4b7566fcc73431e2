import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';
import { REMINDER_VIEW_COLUMNS, type ReminderView } from '../reminder-view';

/**
 * Cancels a pending reminder: its delivery finds it cancelled under the same row lock and posts
 * nothing. A reminder already sent or cancelled is answered as it is (nothing changes). Another
 * organization's reminder is 404.
 */
export class CancelReminder extends Command<ReminderView> {
  constructor(
    readonly caller: MemberCaller,
    readonly id: string,
  ) {
    super();
  }
}

@CommandHandler(CancelReminder)
export class CancelReminderHandler implements ICommandHandler<CancelReminder> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, id }: CancelReminder): Promise<ReminderView> {
    if (!isUuid(id)) throw new NotFound('Reminder');
    const row = await this.db.one<ReminderView>(
      `WITH cancelled AS (
         UPDATE reminders SET state = 'cancelled' WHERE id = $1 AND organization_id = $2 AND state = 'pending' RETURNING ${REMINDER_VIEW_COLUMNS}
       )
       SELECT * FROM cancelled
       UNION ALL
       SELECT ${REMINDER_VIEW_COLUMNS} FROM reminders WHERE id = $1 AND organization_id = $2 AND NOT EXISTS (SELECT 1 FROM cancelled)`,
      [id, caller.organizationId],
    );
    if (row === undefined) throw new NotFound('Reminder');
    return row;
  }
}

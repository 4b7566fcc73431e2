import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { canSteerOthersWork, Forbidden, isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { REMINDER_VIEW_COLUMNS, type ReminderView } from '../reminder-view';

/**
 * Cancels a pending reminder: its delivery finds it cancelled under the same row lock and posts
 * nothing. A reminder already sent or cancelled is answered as it is (nothing changes). Another
 * organization's reminder is 404. Only its creator — the member whose Turn set it — an owner or an
 * admin may cancel it (the rule of pause and client tool outputs, `canSteerOthersWork`): anyone
 * else gets 403 and the reminder stays as it is.
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
    const row = await this.db.one<ReminderView & { allowed: boolean }>(
      `WITH target AS (
         SELECT $3::boolean OR EXISTS (SELECT 1 FROM chat_turns t WHERE t.execution_id = r.execution_id AND t.scope_kind = 'member' AND t.scope_id = $4::uuid) AS allowed
           FROM reminders r WHERE r.id = $1 AND r.organization_id = $2
       ), cancelled AS (
         UPDATE reminders SET state = 'cancelled'
          WHERE id = $1 AND organization_id = $2 AND state = 'pending' AND (SELECT allowed FROM target) RETURNING ${REMINDER_VIEW_COLUMNS}
       )
       SELECT cancelled.*, true AS allowed FROM cancelled
       UNION ALL
       SELECT ${REMINDER_VIEW_COLUMNS}, (SELECT allowed FROM target) FROM reminders
        WHERE id = $1 AND organization_id = $2 AND NOT EXISTS (SELECT 1 FROM cancelled)`,
      [id, caller.organizationId, canSteerOthersWork(caller), caller.memberId],
    );
    if (row === undefined) throw new NotFound('Reminder');
    if (!row.allowed) throw new Forbidden("Only the member whose Turn set this reminder, an owner or an admin may cancel it.");
    const { allowed: _allowed, ...view } = row;
    return view;
  }
}

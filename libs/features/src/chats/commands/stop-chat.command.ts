import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';

/**
 * Stops a Chat's work (RES-04): a cancel command for every Turn that has not ended, queued ones
 * first so none of them is admitted by the advancing Turn's end. Each execution closes its phase
 * gate, releases its resources and ends `cancelled`; the Chat stays open for new input.
 */
export class StopChat extends Command<{ readonly executionIds: readonly string[] }> {
  constructor(
    readonly caller: MemberCaller,
    readonly chatId: string,
  ) {
    super();
  }
}

@CommandHandler(StopChat)
export class StopChatHandler implements ICommandHandler<StopChat> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, chatId }: StopChat): Promise<{ executionIds: string[] }> {
    if (!isUuid(chatId)) throw new NotFound('Chat');
    const rows = await this.db.rows<{ chat: string; executionId: string | null }>(
      `SELECT c.id AS chat, t.execution_id AS "executionId"
         FROM chats c LEFT JOIN chat_turns t ON t.chat_id = c.id AND t.state <> 'ended'
        WHERE c.id = $1 AND c.organization_id = $2 AND c.closed_at IS NULL
        ORDER BY t.state = 'running', t.seq DESC`,
      [chatId, caller.organizationId],
    );
    if (rows.length === 0) throw new NotFound('Chat');
    const executionIds = rows.flatMap((row) => (row.executionId === null ? [] : [row.executionId]));
    for (const id of executionIds) await this.engine.cancel(id);
    return { executionIds };
  }
}

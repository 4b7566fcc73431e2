import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { CHAT_DELETE } from '../delete/chat-delete.workflow';

/**
 * Deletes a Chat as an execution command (RES-04): admission closes now (the Chat answers 404
 * from here on), and a `chat.delete` execution cancels its Turns, waits for their release and
 * removes the rows. A second delete answers 404 like any unknown Chat.
 */
export class DeleteChat extends Command<{ readonly executionId: string }> {
  constructor(
    readonly caller: MemberCaller,
    readonly chatId: string,
  ) {
    super();
  }
}

@CommandHandler(DeleteChat)
export class DeleteChatHandler implements ICommandHandler<DeleteChat> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, chatId }: DeleteChat): Promise<{ executionId: string }> {
    if (!isUuid(chatId)) throw new NotFound('Chat');
    const executionId = await this.db.transaction(async (tx) => {
      const { rowCount } = await tx.query({
        name: 'chats.lock_for_delete',
        text: 'SELECT 1 FROM chats WHERE id = $1 AND organization_id = $2 AND closed_at IS NULL FOR UPDATE',
        values: [chatId, caller.organizationId],
      });
      // Already being deleted answers like an unknown Chat: it is gone for the API from the first delete on.
      if (rowCount === 0) throw new NotFound('Chat');
      await tx.query({ name: 'chats.close', text: 'UPDATE chats SET closed_at = now() WHERE id = $1', values: [chatId] });
      return this.engine.in(tx).submit({
        ...CHAT_DELETE.command({ chatId }),
        scope: { kind: 'member', id: caller.memberId, organizationId: caller.organizationId },
        resource: { type: 'chat', id: chatId },
        // No identity to re-check (IDN-06): the delete only releases and removes what the caller
        // was allowed to delete when it was accepted; like a cancel, release needs no rights, and
        // a member removed meanwhile must not leave a closed Chat half deleted.
      });
    });
    return { executionId };
  }
}

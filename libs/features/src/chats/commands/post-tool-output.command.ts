import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { canSteerOthersWork, Conflict, Forbidden, isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { checkMessageFiles } from '../../files/message-files';
import { CLIENT_TOOL_SIGNAL, TURN } from '../../../../platform/src/turn-core/turn-contract';

/**
 * The output of a client tool call a Turn waits on. Saved first, once (a second, different
 * output is a conflict; the same one again is accepted), then the Turn is signalled: it reads
 * the saved row when it wakes, so a lost wake-up loses nothing. Only the Turn's actor (the member
 * whose message started it), an owner or an admin may answer: the Turn acts on the output under
 * its actor's identity, so another member must not be able to put words in its mouth.
 */
export class PostToolOutput extends Command<{ readonly turnId: string; readonly executionId: string }> {
  constructor(
    readonly caller: MemberCaller,
    readonly chatId: string,
    readonly callId: string,
    readonly output: string,
    readonly isError: boolean,
    /** Files the output hands the model beside its text (STC-09). */
    readonly fileIds: readonly string[] = [],
  ) {
    super();
  }
}

@CommandHandler(PostToolOutput)
export class PostToolOutputHandler implements ICommandHandler<PostToolOutput> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, chatId, callId, output, isError, fileIds }: PostToolOutput): Promise<{ turnId: string; executionId: string }> {
    if (!isUuid(chatId)) throw new NotFound('Chat');
    if (fileIds.length > 0) {
      const chat = await this.db.one<{ model: string }>('SELECT b.model FROM chats c JOIN bots b ON b.id = c.bot_id WHERE c.id = $1 AND c.organization_id = $2', [chatId, caller.organizationId]);
      if (chat === undefined) throw new NotFound('Chat');
      await checkMessageFiles(this.db, caller.organizationId, chat.model, fileIds);
    }
    const rows = await this.db.rows<{ turnId: string; executionId: string; answered: number; same: boolean | null; allowed: boolean }>(
      `WITH target AS (
         SELECT k.turn_id, t.execution_id, k.model_output, k.is_error, k.file_ids, k.answered_at,
                $6::boolean OR (t.scope_kind = 'member' AND t.scope_id = $7::uuid) AS allowed
           FROM chats c JOIN chat_turns t ON t.chat_id = c.id AND t.state <> 'ended'
           JOIN chat_client_tool_calls k ON k.turn_id = t.id AND k.call_id = $3
          WHERE c.id = $1 AND c.organization_id = $2 AND c.closed_at IS NULL
          FOR UPDATE OF k
       ), answered AS (
         UPDATE chat_client_tool_calls k SET model_output = $4, is_error = $5, file_ids = $8::uuid[], answered_at = now()
           FROM target WHERE k.turn_id = target.turn_id AND k.call_id = $3 AND target.answered_at IS NULL AND target.allowed
         RETURNING k.turn_id
       )
       SELECT target.turn_id AS "turnId", target.execution_id AS "executionId",
              (SELECT count(*) FROM answered)::int AS answered,
              target.model_output = $4 AND target.is_error = $5 AND target.file_ids = $8::uuid[] AS same, target.allowed
         FROM target`,
      [chatId, caller.organizationId, callId, output, isError, canSteerOthersWork(caller), caller.memberId, fileIds],
    );
    const row = rows[0];
    if (row === undefined) throw new NotFound('ToolCall');
    if (!row.allowed) throw new Forbidden("Only the member whose message started this Turn, an owner or an admin may answer its tool calls.");
    if (row.answered === 0 && row.same !== true) throw new Conflict('ToolCallAnswered', 'This tool call already has another output.');
    await TURN.signal(this.engine, row.executionId, CLIENT_TOOL_SIGNAL, { callId });
    return { turnId: row.turnId, executionId: row.executionId };
  }
}

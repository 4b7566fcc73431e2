import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';

/** A Chat message as the API shows it (docs/http-api.md). */
export interface MessageView {
  readonly id: string;
  readonly role: 'user' | 'assistant' | 'tool';
  readonly content: string;
  /** Files the message carries to the model (a user message's attachments, a tool result's files). */
  readonly fileIds: readonly string[];
  readonly turnId: string;
  /** `task` (a detached task's notice) or `reminder`; null: its caller's input or the Turn's reply. */
  readonly author: 'task' | 'reminder' | null;
  /** On a Turn's partial reply: the limit that stopped it (decision 084); null otherwise. */
  readonly stop: 'max-steps' | 'max-seconds' | 'max-output-tokens' | 'max-cost' | 'budget' | null;
  readonly createdAt: Date;
}

/**
 * A Chat's messages in order, oldest first. A model step that only asked for tools has no text
 * and shows no assistant message; its tool results do show. A Turn a limit stopped ends with its
 * partial reply, marked `stop` (empty when it said nothing after its tools). A Turn's reply appears when the
 * Turn ends (it commits with the end, before `execution.ended` is published).
 */
export class ListMessages extends Query<Page<MessageView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly chatId: string,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListMessages)
export class ListMessagesHandler implements IQueryHandler<ListMessages> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, chatId, page }: ListMessages): Promise<Page<MessageView>> {
    if (!isUuid(chatId)) throw new NotFound('Chat');
    const rows = await this.db.rows<MessageView & { chat: string; id: string | null }>(
      `SELECT c.id AS chat, m.id, m.role, m.content, m.file_ids::text[] AS "fileIds", m.turn_id AS "turnId", m.author, m.stop, m.created_at AS "createdAt"
         FROM chats c
         LEFT JOIN LATERAL (
           SELECT id, role, content, file_ids, turn_id, author, stop, created_at FROM chat_messages
            WHERE chat_id = c.id AND NOT (role = 'assistant' AND content = '' AND stop IS NULL)
              AND position > COALESCE((SELECT position FROM chat_messages WHERE id = $3::uuid AND chat_id = c.id), 0)
            ORDER BY position LIMIT $4
         ) m ON true
        WHERE c.id = $1 AND c.organization_id = $2 AND c.closed_at IS NULL`,
      [chatId, caller.organizationId, page.after, page.limit + 1],
    );
    if (rows.length === 0) throw new NotFound('Chat');
    const messages = rows.filter((row) => row.id !== null).map(({ chat: _chat, ...message }) => message as MessageView);
    return toPage(messages, page.limit);
  }
}

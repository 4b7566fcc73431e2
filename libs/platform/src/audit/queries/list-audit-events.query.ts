import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { toPage, type ListOrder, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../database/sql';

export interface AuditEventView {
  readonly id: string;
  readonly actor: { readonly kind: string; readonly id: string | null };
  readonly action: string;
  readonly target: { readonly type: string; readonly id: string };
  readonly details: Record<string, unknown>;
  readonly createdAt: Date;
}

/**
 * The organization's audit log, oldest first (`asc`) or newest first (`desc`); the cursor
 * continues in the same order (IDN-08: the organization is in the query).
 */
export class ListAuditEvents extends Query<Page<AuditEventView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
    readonly order: ListOrder = 'asc',
  ) {
    super();
  }
}

@QueryHandler(ListAuditEvents)
export class ListAuditEventsHandler implements IQueryHandler<ListAuditEvents> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page, order }: ListAuditEvents): Promise<Page<AuditEventView>> {
    const rows = await this.db.rows<AuditEventView>(
      `SELECT id, json_build_object('kind', actor_kind, 'id', actor_id) AS actor, action,
              json_build_object('type', target_type, 'id', target_id) AS target, details, created_at AS "createdAt"
         FROM audit_events
        WHERE organization_id = $1 AND ($2::uuid IS NULL OR ${order === 'asc' ? 'id > $2::uuid' : 'id < $2::uuid'})
        ORDER BY id ${order === 'asc' ? 'ASC' : 'DESC'} LIMIT $3`,
      [caller.organizationId, page.after, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

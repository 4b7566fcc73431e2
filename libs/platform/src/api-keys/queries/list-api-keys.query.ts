import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { canManageAllApiKeys, toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../database/sql';
import { API_KEY_VIEW_COLUMNS, type ApiKeyView } from '../api-key-view';

/** The caller's organization's keys (owners and admins) or the caller's own keys, oldest first. */
export class ListApiKeys extends Query<Page<ApiKeyView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListApiKeys)
export class ListApiKeysHandler implements IQueryHandler<ListApiKeys> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page }: ListApiKeys): Promise<Page<ApiKeyView>> {
    // Access rules live in the WHERE clause, never in a filter after the read (IDN-08).
    const rows = await this.db.rows<ApiKeyView>(
      `SELECT ${API_KEY_VIEW_COLUMNS} FROM api_keys
        WHERE organization_id = $1 AND ($2::boolean OR member_id = $3)
          AND ($4::uuid IS NULL OR id > $4::uuid)
        ORDER BY id LIMIT $5`,
      [caller.organizationId, canManageAllApiKeys(caller), caller.memberId, page.after, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

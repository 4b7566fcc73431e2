import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../database/sql';
import { MEMBER_VIEW_COLUMNS, type MemberView } from '../member-view';

/** The organization's current members, oldest first (removed members are not listed). */
export class ListMembers extends Query<Page<MemberView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListMembers)
export class ListMembersHandler implements IQueryHandler<ListMembers> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page }: ListMembers): Promise<Page<MemberView>> {
    const rows = await this.db.rows<MemberView>(
      `SELECT ${MEMBER_VIEW_COLUMNS} FROM members
        WHERE organization_id = $1 AND removed_at IS NULL AND ($2::uuid IS NULL OR id > $2::uuid)
        ORDER BY id LIMIT $3`,
      [caller.organizationId, page.after, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { toPage, type OrganizationId, type Page, type PageRequest, type PlatformAdmin } from '@openbot/domain';
import { Database } from '../../database/sql';

export interface OrganizationView {
  readonly id: OrganizationId;
  readonly name: string;
  readonly createdAt: Date;
}

/** Platform administrators list every organization, oldest first. */
export class ListOrganizations extends Query<Page<OrganizationView>> {
  constructor(
    readonly caller: PlatformAdmin,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListOrganizations)
export class ListOrganizationsHandler implements IQueryHandler<ListOrganizations> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ page }: ListOrganizations): Promise<Page<OrganizationView>> {
    const rows = await this.db.rows<OrganizationView>(
      `SELECT id, name, created_at AS "createdAt" FROM organizations
        WHERE $1::uuid IS NULL OR id > $1::uuid
        ORDER BY id LIMIT $2`,
      [page.after, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

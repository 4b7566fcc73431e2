import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../database/sql';
import { MODEL_PROVIDER_VIEW_COLUMNS, type ModelProviderView } from '../model-provider-view';

/** The caller's organization's model providers, oldest first. */
export class ListModelProviders extends Query<Page<ModelProviderView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListModelProviders)
export class ListModelProvidersHandler implements IQueryHandler<ListModelProviders> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page }: ListModelProviders): Promise<Page<ModelProviderView>> {
    // The organization is in the WHERE clause, never a filter after the read (IDN-08).
    const rows = await this.db.rows<ModelProviderView>(
      `SELECT ${MODEL_PROVIDER_VIEW_COLUMNS} FROM model_providers
        WHERE organization_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid)
        ORDER BY id LIMIT $3`,
      [caller.organizationId, page.after, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

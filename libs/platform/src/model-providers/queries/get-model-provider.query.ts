import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';
import { MODEL_PROVIDER_VIEW_COLUMNS, type ModelProviderView } from '../model-provider-view';

/** One provider of the caller's organization; malformed, unknown and foreign IDs are NotFound alike (IDN-08). */
export class GetModelProvider extends Query<ModelProviderView> {
  constructor(
    readonly caller: MemberCaller,
    readonly id: string,
  ) {
    super();
  }
}

@QueryHandler(GetModelProvider)
export class GetModelProviderHandler implements IQueryHandler<GetModelProvider> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, id }: GetModelProvider): Promise<ModelProviderView> {
    if (!isUuid(id)) throw new NotFound('ModelProvider');
    const row = await this.db.one<ModelProviderView>(
      `SELECT ${MODEL_PROVIDER_VIEW_COLUMNS} FROM model_providers WHERE id = $1 AND organization_id = $2`,
      [id, caller.organizationId],
    );
    if (row === undefined) throw new NotFound('ModelProvider');
    return row;
  }
}

import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { DataSource } from 'typeorm';
import { MODEL_PROVIDER_VIEW_COLUMNS, type ModelProviderView } from '../model-provider-view';

/**
 * Deletes a provider of the caller's organization and its sealed API key, in one transaction,
 * and answers what was deleted.
 * A malformed, unknown or other organization's ID is NotFound, all alike (IDN-08).
 */
export class DeleteModelProvider extends Command<ModelProviderView> {
  constructor(
    readonly caller: MemberCaller,
    readonly id: string,
  ) {
    super();
  }
}

@CommandHandler(DeleteModelProvider)
export class DeleteModelProviderHandler implements ICommandHandler<DeleteModelProvider> {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async execute({ caller, id }: DeleteModelProvider): Promise<ModelProviderView> {
    if (!isUuid(id)) throw new NotFound('ModelProvider');
    return this.dataSource.transaction(async (manager) => {
      const [rows] = (await manager.query(
        `DELETE FROM model_providers WHERE id = $1 AND organization_id = $2 RETURNING ${MODEL_PROVIDER_VIEW_COLUMNS}, api_key_record_id AS "apiKeyRecordId"`,
        [id, caller.organizationId],
      )) as [Array<ModelProviderView & { apiKeyRecordId: string | null }>, number];
      const row = rows[0];
      if (row === undefined) throw new NotFound('ModelProvider');
      const { apiKeyRecordId, ...view } = row;
      if (apiKeyRecordId !== null) await manager.query('DELETE FROM sealed_records WHERE id = $1', [apiKeyRecordId]);
      return view;
    });
  }
}

import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { recordAudit } from '../../audit/record-audit';
import { Database } from '../../database/sql';
import { IN_USE_BOTS_SHOWN, ModelProviderInUse, type BotUsingProvider } from '../model-provider-in-use';
import { MODEL_PROVIDER_VIEW_COLUMNS, type ModelProviderView } from '../model-provider-view';

/**
 * Deletes a provider of the caller's organization and its sealed API key, in one transaction,
 * and answers what was deleted.
 * A malformed, unknown or other organization's ID is NotFound, all alike (IDN-08).
 * A provider a Bot's model names is not deleted: 409 ModelProviderInUse names those Bots. The
 * provider's row is locked before the Bots are read, and a Bot create or update naming it holds a
 * key-share lock on that row until it commits, so neither can slip past the other.
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
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, id }: DeleteModelProvider): Promise<ModelProviderView> {
    if (!isUuid(id)) throw new NotFound('ModelProvider');
    return this.db.transaction(async (tx) => {
      const provider = await tx.one<{ name: string }>('SELECT name FROM model_providers WHERE id = $1 AND organization_id = $2 FOR UPDATE', [id, caller.organizationId]);
      if (provider === undefined) throw new NotFound('ModelProvider');
      const users = await tx.rows<BotUsingProvider & { total: number }>(
        `SELECT id, name, count(*) OVER ()::int AS total FROM bots
          WHERE organization_id = $1 AND split_part(model, '/', 1) = $2
          ORDER BY id LIMIT $3`,
        [caller.organizationId, provider.name, IN_USE_BOTS_SHOWN],
      );
      if (users.length > 0) throw new ModelProviderInUse(provider.name, users, users[0]!.total);
      const row = await tx.one<ModelProviderView & { apiKeyRecordId: string | null }>(
        `DELETE FROM model_providers WHERE id = $1 AND organization_id = $2 RETURNING ${MODEL_PROVIDER_VIEW_COLUMNS}, api_key_record_id AS "apiKeyRecordId"`,
        [id, caller.organizationId],
      );
      if (row === undefined) throw new NotFound('ModelProvider');
      const { apiKeyRecordId, ...view } = row;
      if (apiKeyRecordId !== null) await tx.count('DELETE FROM sealed_records WHERE id = $1', [apiKeyRecordId]);
      await recordAudit(tx, { organizationId: caller.organizationId, actor: caller, action: 'model-provider.deleted', target: { type: 'model-provider', id }, details: { name: view.name, kind: view.kind, baseUrl: view.baseUrl } });
      return view;
    });
  }
}

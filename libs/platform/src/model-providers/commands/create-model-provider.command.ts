import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Conflict, InvalidInput, newId, type MemberCaller, type ModelProviderId } from '@openbot/domain';
import { recordAudit } from '../../audit/record-audit';
import { Database } from '../../database/sql';
import { EgressPolicy } from '../../egress/egress-policy';
import { SealedRecords } from '../../sealing/sealed-records';
import { VaultSecrets } from '../../vaults/vault-secrets';
import { referenceIssues, storedReference, type VaultReference } from '../../vaults/vault-view';
import {
  MODEL_PROVIDER_API_KEY_PURPOSE,
  MODEL_PROVIDER_VIEW_COLUMNS,
  type ModelProviderKind,
  type ModelProviderView,
} from '../model-provider-view';

/**
 * Registers a model provider for the caller's organization. The base URL must pass the egress
 * policy now (a refusal is a 400 on `baseUrl`); the API key is sealed in the same transaction
 * as the row, so a failed insert leaves no sealed key behind. A key given as a Vault reference
 * is stored as the reference: the caller needs `vaults.use` on its Vault and the base URL's host
 * must be in the item's `allowedHosts` (SEC-02); the key is opened only at each model call.
 */
export class CreateModelProvider extends Command<ModelProviderView> {
  constructor(
    readonly caller: MemberCaller,
    readonly name: string,
    readonly kind: ModelProviderKind,
    readonly baseUrl: string,
    readonly apiKey: string | VaultReference | null,
  ) {
    super();
  }
}

@CommandHandler(CreateModelProvider)
export class CreateModelProviderHandler implements ICommandHandler<CreateModelProvider> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(SealedRecords) private readonly sealedRecords: SealedRecords,
    @Inject(EgressPolicy) private readonly egress: EgressPolicy,
    @Inject(VaultSecrets) private readonly vaults: VaultSecrets,
  ) {}

  async execute({ caller, name, kind, baseUrl, apiKey }: CreateModelProvider): Promise<ModelProviderView> {
    const decision = await this.egress.check(baseUrl);
    if (!decision.allowed) throw new InvalidInput([{ path: 'baseUrl', message: `baseUrl ${decision.reason}` }]);
    if (decision.url.username !== '' || decision.url.password !== '') {
      // Credentials in the URL would be stored in the clear: they belong in apiKey, which is sealed.
      throw new InvalidInput([{ path: 'baseUrl', message: 'baseUrl must not carry credentials; send them as apiKey' }]);
    }
    let reference: VaultReference | null = null;
    if (apiKey !== null && typeof apiKey === 'object') {
      const issues = referenceIssues(apiKey, 'apiKey');
      if (issues.length > 0) throw new InvalidInput(issues);
      reference = storedReference(apiKey);
      await this.vaults.checkForSave(caller, [{ path: 'apiKey', reference, url: baseUrl }]);
    }
    const literal = typeof apiKey === 'string' ? apiKey : null;
    const id = newId<ModelProviderId>();
    return this.db.transaction(async (tx) => {
      const apiKeyRecordId = literal === null ? null : await this.sealedRecords.put(MODEL_PROVIDER_API_KEY_PURPOSE, literal, tx);
      // ON CONFLICT waits for a concurrent insert of the same name and then answers no row.
      const row = await tx.one<ModelProviderView>(
        `INSERT INTO model_providers (id, organization_id, name, kind, base_url, api_key_record_id, api_key_reference)
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)
         ON CONFLICT (organization_id, name) DO NOTHING
         RETURNING ${MODEL_PROVIDER_VIEW_COLUMNS}`,
        [id, caller.organizationId, name, kind, baseUrl, apiKeyRecordId, reference === null ? null : JSON.stringify(reference)],
      );
      // Throwing rolls the sealed key back with the transaction.
      if (row === undefined) throw new Conflict('ModelProviderNameTaken', `A model provider named "${name}" already exists.`);
      // How the key is held, never the key itself.
      const key = reference !== null ? { apiKey: 'vault-reference', vaultItemId: reference.vaultItemId } : { apiKey: literal === null ? 'none' : 'literal' };
      await recordAudit(tx, { organizationId: caller.organizationId, actor: caller, action: 'model-provider.created', target: { type: 'model-provider', id }, details: { name, kind, baseUrl, ...key } });
      return row;
    });
  }
}

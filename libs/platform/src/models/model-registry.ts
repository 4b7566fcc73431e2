import { Inject, Injectable, Optional } from '@nestjs/common';
import { AnthropicProvider, ModelFailure, OpenAiCompatibleProvider, ReadPacer, type ModelProvider, type ModelRequest, type ModelStreamEvent } from '@openbot/core';
import type { Queryable } from '@openbot/engine';
import { parseModelReference } from './model-reference';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../config/runtime-config';
import { Database } from '../database/sql';
import { EgressClient, EgressRefused } from '../egress/egress-client';
import type { ModelProviderKind } from '../model-providers/model-provider-view';
import { SealedRecords } from '../sealing/sealed-records';
import { VaultReferenceRefused, VaultSecrets, type SendActor } from '../vaults/vault-secrets';
import type { VaultReference } from '../vaults/vault-view';

/** Whose send a connection is for, and the engine's identity check of it (IDN-06). */
export interface ModelSend {
  readonly actor: SendActor;
  readonly checkIdentity?: () => Promise<void>;
}

/** A model of an organization, ready to call: the provider's own model id, and its adapter made at the send. */
export interface ResolvedModel {
  readonly providerId: string;
  readonly modelId: string;
  /** The provider's wire kind: a metrics label (decision 034), never its ID. */
  readonly kind: ModelProviderKind;
  /**
   * The adapter with the provider's key, opened now and for this send only (FW-08): a sealed
   * literal key, or a Vault reference checked again (item, field, `allowedHosts` against the base
   * URL, the member's `vaults.use`) before it is opened (SEC-02). Throws VaultReferenceRefused.
   */
  connect(send: ModelSend): Promise<ModelProvider>;
}

interface ProviderRow {
  readonly id: string;
  readonly kind: ModelProviderKind;
  readonly baseUrl: string;
  readonly apiKeyRecordId: string | null;
  readonly apiKeyReference: VaultReference | null;
  /** The sealed record of a literal key, read with the provider (still sealed: it is opened at each send); null: none stored. */
  readonly keyPurpose: string | null;
  readonly keySealedWith: string | null;
  readonly keyData: Buffer | null;
}

/** A provider's columns, with its literal key's sealed record (`LEFT JOIN sealed_records s`): one read, not two. */
const PROVIDER_COLUMNS = `p.id, p.kind, p.base_url AS "baseUrl", p.api_key_record_id AS "apiKeyRecordId", p.api_key_reference AS "apiKeyReference",
  s.purpose AS "keyPurpose", s.key_id AS "keySealedWith", s.data AS "keyData"`;
const KEY_RECORD = 'LEFT JOIN sealed_records s ON s.id = p.api_key_record_id';

/** A Chat's Bot's model and its provider (null: the provider does not exist), read ahead of a call (ModelCalls.readAhead). */
export interface ModelReadAhead {
  readonly model: string;
  readonly resolved: ResolvedModel | null;
}

/** The model's provider is gone (deleted since the Bot was saved): the call cannot be made. */
export class ModelUnavailable extends ModelFailure {
  constructor(model: string) {
    super('invalid-request', `model provider of "${model}" does not exist in this organization`);
  }
}

/**
 * Provider resolution behind ModelCalls, the one way the platform calls a language model
 * (PLAT-06; only ModelCalls may use it, a dependency rule says so). It resolves `<provider>/<model>`
 * within an organization at call time, opens the provider's key only at the send (it is held
 * by the adapter for this attempt and never stored elsewhere), and gives the adapter the egress
 * client's fetch (policy checked before every request, connections pinned to the checked addresses). Retry policy belongs to the caller's call
 * log (CALL-02, CALL-04); adapters make one attempt per request.
 */
@Injectable()
export class ModelRegistry {
  /** One per node: paces the reads of all its model streams while it is busy (decision 063); none when the operator turned it off. */
  private readonly pacer: ReadPacer | undefined;

  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(SealedRecords) private readonly sealedRecords: SealedRecords,
    @Inject(EgressClient) private readonly egress: EgressClient,
    // Absent (a test without Vaults): a provider whose key is a Vault reference is refused.
    @Optional() @Inject(VaultSecrets) private readonly vaults?: VaultSecrets,
    // Absent (a test without the node's config): the default pace.
    @Optional() @Inject(RUNTIME_CONFIG) config?: RuntimeConfig,
  ) {
    const reads = config?.modelReads;
    this.pacer = reads === undefined ? new ReadPacer() : ReadPacer.configured(reads.readPaceMs, reads.pacedFromStreams);
  }

  async resolve(organizationId: string, model: string): Promise<ResolvedModel> {
    const { provider: name, modelId } = parseModelReference(model);
    const row = await this.db.one<ProviderRow>(`SELECT ${PROVIDER_COLUMNS} FROM model_providers p ${KEY_RECORD} WHERE p.organization_id = $1 AND p.name = $2`, [organizationId, name]);
    if (row === undefined) throw new ModelUnavailable(model);
    return this.ready(organizationId, modelId, row);
  }

  /**
   * The provider of a Chat's Bot's model, read on the caller's connection (beside the caller's
   * own reads of that Bot, so no round trip of its own): `model` is the Bot's model as this read
   * saw it, and `resolved` is null when its provider does not exist.
   */
  async resolveForChat(db: Queryable, organizationId: string, chatId: string): Promise<ModelReadAhead | null> {
    const { rows } = await db.query<ProviderRow & { model: string; found: boolean }>({
      name: 'models.provider_of_chat',
      text: `SELECT b.model, p.id IS NOT NULL AS found, ${PROVIDER_COLUMNS}
               FROM chats c JOIN bots b ON b.id = c.bot_id
               LEFT JOIN model_providers p ON p.organization_id = $1 AND p.name = split_part(b.model, '/', 1)
               ${KEY_RECORD}
              WHERE c.id = $2 AND c.organization_id = $1`,
      values: [organizationId, chatId],
    });
    const row = rows[0];
    if (row === undefined) return null;
    return { model: row.model, resolved: row.found ? this.ready(organizationId, parseModelReference(row.model).modelId, row) : null };
  }

  private ready(organizationId: string, modelId: string, row: ProviderRow): ResolvedModel {
    return {
      providerId: row.id,
      modelId,
      kind: row.kind,
      connect: async (send) => {
        const apiKey = await this.openKey(organizationId, row, send);
        const options = { baseUrl: row.baseUrl, apiKey, post: this.egress.post, maxErrorBodyBytes: this.egress.limits.documentBytes, pacer: this.pacer };
        const adapter: ModelProvider = row.kind === 'anthropic' ? new AnthropicProvider(options) : new OpenAiCompatibleProvider(options);
        return new EgressAwareProvider(adapter);
      },
    };
  }

  private async openKey(organizationId: string, row: ProviderRow, send: ModelSend): Promise<string | undefined> {
    if (row.apiKeyReference !== null) {
      if (this.vaults === undefined) throw new VaultReferenceRefused('Vaults are not available on this node');
      const [key] = await this.vaults.open({
        organizationId,
        actor: send.actor,
        url: row.baseUrl,
        references: [row.apiKeyReference],
        ...(send.checkIdentity ? { checkIdentity: send.checkIdentity } : {}),
      });
      return key;
    }
    if (row.apiKeyRecordId === null) return undefined;
    const record =
      row.keyPurpose === null || row.keySealedWith === null || row.keyData === null
        ? null
        : this.sealedRecords.open({ id: row.apiKeyRecordId, purpose: row.keyPurpose, key_id: row.keySealedWith, data: row.keyData });
    return typeof record?.value === 'string' ? record.value : undefined;
  }
}

/**
 * Reports an egress refusal as a model failure the caller does not retry. It maps the inner
 * stream's errors on its iterator instead of re-yielding each event through a generator of its
 * own: a reply's hundreds of events cost no extra generator step each.
 */
class EgressAwareProvider implements ModelProvider {
  constructor(private readonly inner: ModelProvider) {}

  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    return {
      [Symbol.asyncIterator]: (): AsyncIterator<ModelStreamEvent> => {
        // Started at the first read, as a generator would be; a synchronous throw is mapped like any other.
        let events: AsyncIterator<ModelStreamEvent> | undefined;
        return {
          next: () => {
            try {
              events ??= this.inner.stream(request)[Symbol.asyncIterator]();
              return events.next().then(undefined, asRefusal);
            } catch (error) {
              return Promise.reject(error as Error).then(undefined, asRefusal);
            }
          },
          return: () => (events?.return?.() ?? Promise.resolve({ done: true as const, value: undefined })).then(undefined, asRefusal),
        };
      },
    };
  }
}

function asRefusal(error: unknown): never {
  const refusal = error instanceof EgressRefused ? error : (error as { cause?: unknown } | null)?.cause;
  if (refusal instanceof EgressRefused) throw new ModelFailure('invalid-request', refusal.message, { cause: refusal });
  throw error;
}


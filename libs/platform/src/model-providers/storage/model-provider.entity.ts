import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../organizations/storage/organization.entity';
import { SealedRecordEntity } from '../../sealing/storage/sealed-record.entity';

/**
 * A model provider of an organization. Its API key is never a column here: it lives sealed in
 * `sealed_records` (SEC-01), and this row only points at it.
 */
@Entity({ name: 'model_providers' })
@Index('model_providers_organization_id_id_idx', ['organizationId', 'id'])
@Index('model_providers_organization_id_name_key', ['organizationId', 'name'], { unique: true })
export class ModelProviderEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'model_providers_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'model_providers_organization_id_fkey' })
  organization?: OrganizationEntity;

  /** Unique per organization; models are named `<provider name>/<model id>`. */
  @Column('text')
  name!: string;

  /** One of MODEL_PROVIDER_KINDS. */
  @Column('text')
  kind!: string;

  @Column('text', { name: 'base_url' })
  baseUrl!: string;

  /** The sealed record holding the API key (purpose `model-provider.api-key`), or null without a key. */
  @Column('uuid', { name: 'api_key_record_id', nullable: true })
  apiKeyRecordId!: string | null;

  @ManyToOne(() => SealedRecordEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'api_key_record_id', foreignKeyConstraintName: 'model_providers_api_key_record_id_fkey' })
  apiKeyRecord?: SealedRecordEntity;

  /** A Vault reference `{ vaultItemId, field }` naming the key instead (decision 029), or null. */
  @Column('jsonb', { name: 'api_key_reference', nullable: true })
  apiKeyReference!: { vaultItemId: string; field: string } | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../organizations/storage/organization.entity';

/**
 * One version of an organization's price for one model (PLAT-08): rows are only added, never
 * changed, so a usage record's `price_id` always names the price it was charged at. The version
 * in force at a time is the one with the latest `effective_from` not after it.
 */
@Entity({ name: 'prices' })
@Index('prices_organization_id_model_effective_from_idx', ['organizationId', 'model', 'effectiveFrom'])
@Index('prices_organization_id_id_idx', ['organizationId', 'id'])
export class PriceEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'prices_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'prices_organization_id_fkey' })
  organization?: OrganizationEntity;

  /** `<provider name>/<model id>`, as a Bot names it. */
  @Column('text')
  model!: string;

  @Column('bigint', { name: 'input_per_million_micros' })
  inputPerMillionMicros!: string;

  @Column('bigint', { name: 'output_per_million_micros' })
  outputPerMillionMicros!: string;

  @Column('bigint', { name: 'cached_input_per_million_micros' })
  cachedInputPerMillionMicros!: string;

  /**
   * Who set it (decision 072): `organization`, `platform` (the administrator) or `default` (the
   * operator's OPENBOT_DEFAULT_PRICE). Once the organization has credits only `platform` and
   * `default` versions price its calls.
   */
  @Column('text', { name: 'set_by' })
  setBy!: string;

  @Column('timestamptz', { name: 'effective_from' })
  effectiveFrom!: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

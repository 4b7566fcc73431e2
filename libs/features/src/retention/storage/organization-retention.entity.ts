import { Column, Entity, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../../../platform/src/organizations/storage/organization.entity';

/**
 * An organization's own retention (docs/decisions/041-retention.md): days after an execution
 * ended that its `text.delta` events and its calls' saved results are kept. Null, or no row: the
 * platform default applies.
 */
@Entity({ name: 'organization_retention' })
export class OrganizationRetentionEntity {
  @PrimaryColumn('uuid', { name: 'organization_id', primaryKeyConstraintName: 'organization_retention_pkey' })
  organizationId!: string;

  @OneToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'organization_retention_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Column('integer', { name: 'text_delta_days', nullable: true })
  textDeltaDays!: number | null;

  @Column('integer', { name: 'call_payload_days', nullable: true })
  callPayloadDays!: number | null;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}

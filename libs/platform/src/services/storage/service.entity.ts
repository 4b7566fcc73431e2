import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../organizations/storage/organization.entity';

/**
 * A ServiceIdentity (IDN-10): work the platform or one organization runs without a member —
 * scheduled jobs, channel intake, maintenance. It has no member ID; `organization_id` is null for
 * platform services. `disabled_at` revokes it: its running work stops at its next check.
 */
@Entity({ name: 'services' })
export class ServiceEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'services_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id', nullable: true })
  organizationId!: string | null;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'services_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Column('text')
  name!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'disabled_at', nullable: true })
  disabledAt!: Date | null;
}

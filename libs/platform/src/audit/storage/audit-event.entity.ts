import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../organizations/storage/organization.entity';

/** One security-relevant change of an organization: keys, roles, members, SSO settings. */
@Entity({ name: 'audit_events' })
@Index('audit_events_organization_id_id_idx', ['organizationId', 'id'])
export class AuditEventEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'audit_events_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'audit_events_organization_id_fkey' })
  organization?: OrganizationEntity;

  /** member | service | platform-admin */
  @Column('text', { name: 'actor_kind' })
  actorKind!: string;

  @Column('uuid', { name: 'actor_id', nullable: true })
  actorId!: string | null;

  /** e.g. `api-key.created`, `member.role-changed`, `sso.configured` */
  @Column('text')
  action!: string;

  @Column('text', { name: 'target_type' })
  targetType!: string;

  @Column('text', { name: 'target_id' })
  targetId!: string;

  /** Non-secret facts of the change (never a secret or key material). */
  @Column('jsonb')
  details!: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from './organization.entity';

@Entity({ name: 'members' })
export class MemberEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'members_pkey' })
  id!: string;

  @Index('members_organization_id_idx')
  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'members_organization_id_fkey' })
  organization?: OrganizationEntity;

  /** owner | admin | member | viewer */
  @Column('text')
  role!: string;

  /** A display name (from SSO or given when the member was added). */
  @Column('text', { nullable: true })
  name!: string | null;

  /** The member's email, from SSO (just-in-time provisioning). */
  @Column('text', { nullable: true })
  email!: string | null;

  /** Set when the member was removed: its keys and sessions are revoked and running work stops at its next check (IDN-06). */
  @Column('timestamptz', { name: 'removed_at', nullable: true })
  removedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

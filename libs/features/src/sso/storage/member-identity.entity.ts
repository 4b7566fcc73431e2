import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { MemberEntity } from '../../../../platform/src/organizations/storage/member.entity';
import { OrganizationEntity } from '../../../../platform/src/organizations/storage/organization.entity';

/**
 * Which member an identity provider's account is, per organization: (issuer, subject) is the
 * stable OpenID Connect identity; the email is only what the provider said last (never a key,
 * so a changed or reused address cannot take over another member).
 */
@Entity({ name: 'member_identities' })
export class MemberIdentityEntity {
  @PrimaryColumn('uuid', { name: 'organization_id', primaryKeyConstraintName: 'member_identities_pkey' })
  organizationId!: string;

  @PrimaryColumn('text', { primaryKeyConstraintName: 'member_identities_pkey' })
  issuer!: string;

  @PrimaryColumn('text', { primaryKeyConstraintName: 'member_identities_pkey' })
  subject!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'member_identities_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Index('member_identities_member_id_idx')
  @Column('uuid', { name: 'member_id' })
  memberId!: string;

  @ManyToOne(() => MemberEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'member_id', foreignKeyConstraintName: 'member_identities_member_id_fkey' })
  member?: MemberEntity;

  @Column('text')
  email!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

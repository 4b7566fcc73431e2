import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { MemberEntity } from '../../../../platform/src/organizations/storage/member.entity';
import { OrganizationEntity } from '../../../../platform/src/organizations/storage/organization.entity';

/**
 * A browser session after SSO sign-in. The cookie holds a random 32-byte token; only its
 * sha256 is stored. The CSRF token is not a credential on its own (it is useless without the
 * cookie), so it is kept as is for the session route to show.
 */
@Entity({ name: 'sessions' })
export class SessionEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'sessions_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'sessions_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Index('sessions_member_id_idx')
  @Column('uuid', { name: 'member_id' })
  memberId!: string;

  @ManyToOne(() => MemberEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'member_id', foreignKeyConstraintName: 'sessions_member_id_fkey' })
  member?: MemberEntity;

  @Index('sessions_token_hash_key', { unique: true })
  @Column('bytea', { name: 'token_hash' })
  tokenHash!: Buffer;

  @Column('text', { name: 'csrf_token' })
  csrfToken!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;

  @Column('timestamptz', { name: 'revoked_at', nullable: true })
  revokedAt!: Date | null;
}

import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { MemberEntity } from '../../organizations/storage/member.entity';
import { OrganizationEntity } from '../../organizations/storage/organization.entity';

/** An API key: only the SHA-256 of its secret is kept; the secret is shown once at creation. */
@Entity({ name: 'api_keys' })
@Index('api_keys_organization_id_id_idx', ['organizationId', 'id'])
export class ApiKeyEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'api_keys_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'api_keys_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Index('api_keys_member_id_idx')
  @Column('uuid', { name: 'member_id' })
  memberId!: string;

  @ManyToOne(() => MemberEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'member_id', foreignKeyConstraintName: 'api_keys_member_id_fkey' })
  member?: MemberEntity;

  @Column('text')
  name!: string;

  @Column('bytea', { name: 'secret_hash' })
  secretHash!: Buffer;

  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt!: Date | null;

  @Column('timestamptz', { name: 'last_used_at', nullable: true })
  lastUsedAt!: Date | null;

  @Column('timestamptz', { name: 'revoked_at', nullable: true })
  revokedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** Permissions this key is limited to; null: the member's full rights. A key never widens its member's rights. */
  @Column('jsonb', { nullable: true })
  scopes!: string[] | null;
}

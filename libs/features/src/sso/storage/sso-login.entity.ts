import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../../../platform/src/organizations/storage/organization.entity';

/**
 * A login in flight, between the redirect to the identity provider and its callback. Single use:
 * the callback deletes the row before anything else, so a replayed state (and its nonce) finds
 * nothing; it deletes it only at its own organization's callback and with its browser-binding
 * cookie, so nobody else can use it up. Only hashes of the state and of that cookie are kept.
 */
@Entity({ name: 'sso_logins' })
export class SsoLoginEntity {
  /** sha256 of the `state` parameter. */
  @PrimaryColumn('bytea', { name: 'state_hash', primaryKeyConstraintName: 'sso_logins_pkey' })
  stateHash!: Buffer;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'sso_logins_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  /** The configuration revision the login started with; a changed configuration refuses the callback. */
  @Column('integer')
  revision!: number;

  /** sha256 of the cookie that ties the callback to the browser that started the login. */
  @Column('bytea', { name: 'browser_hash' })
  browserHash!: Buffer;

  @Column('text')
  nonce!: string;

  /** The PKCE verifier; null when the provider does not list S256. */
  @Column('text', { name: 'code_verifier', nullable: true })
  codeVerifier!: string | null;

  /** A same-origin path starting with one `/`. */
  @Column('text', { name: 'return_to' })
  returnTo!: string;

  @Index('sso_logins_created_at_idx')
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { OrganizationEntity } from '../../../../platform/src/organizations/storage/organization.entity';
import { SealedRecordEntity } from '../../../../platform/src/sealing/storage/sealed-record.entity';

/**
 * An organization's OpenID Connect configuration (at most one). The client secret is never a
 * column here: it lives sealed in `sealed_records` (SEC-01). A deletion keeps the row as a
 * tombstone (`deleted_at`, secret gone) so `revision` keeps rising: a node's cached relying
 * party, keyed by (organization, revision), can never match a later configuration.
 */
@Entity({ name: 'sso_configurations' })
export class SsoConfigurationEntity {
  @PrimaryColumn('uuid', { name: 'organization_id', primaryKeyConstraintName: 'sso_configurations_pkey' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'sso_configurations_organization_id_fkey' })
  organization?: OrganizationEntity;

  /** The issuer identifier, exactly as the ID tokens must carry it; endpoints are discovered from it at login. */
  @Column('text')
  issuer!: string;

  @Column('text', { name: 'client_id' })
  clientId!: string;

  /** The sealed record holding the client secret (purpose `sso.client-secret`); null once deleted. */
  @Column('uuid', { name: 'client_secret_record_id', nullable: true })
  clientSecretRecordId!: string | null;

  @ManyToOne(() => SealedRecordEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'client_secret_record_id', foreignKeyConstraintName: 'sso_configurations_client_secret_record_id_fkey' })
  clientSecretRecord?: SealedRecordEntity;

  /** Lower-case email domains whose verified addresses may sign in. */
  @Column('jsonb', { name: 'allowed_domains' })
  allowedDomains!: string[];

  /** The role of a member created at first sign-in: member | viewer | admin. */
  @Column('text', { name: 'default_role' })
  defaultRole!: string;

  /** Rises by one on every change, deletion included. */
  @Column('integer')
  revision!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt!: Date | null;
}

import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OAuthRegistrationEntity } from './oauth-registration.entity';

/**
 * A token pair an exchange or a refresh obtained, or one a replacement or removal set aside
 * (GRANT-01, GRANT-03). Each has its cleanup execution, saved with it. `installed_at`: a
 * connection holds it now (cleanup leaves it alone). `tokens_record_id` is cleared (and its sealed
 * record deleted) when cleanup ends; `revocation` is what cleanup did (`revoked` or `local_only`).
 */
@Entity({ name: 'app_oauth_grant_results' })
@Index('app_oauth_grant_results_call_id_key', ['callId'], { unique: true })
@Index('app_oauth_grant_results_source_execution_id_idx', ['sourceExecutionId'])
export class OAuthGrantResultEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'app_oauth_grant_results_pkey' })
  id!: string;

  /** The call (or the grant version, for a set-aside pair) the pair came from. */
  @Column('text', { name: 'call_id' })
  callId!: string;

  /** exchange | refresh | replaced | removed */
  @Column('text')
  kind!: string;

  @Column('uuid', { name: 'source_execution_id', nullable: true })
  sourceExecutionId!: string | null;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'registration_id' })
  registrationId!: string;

  @ManyToOne(() => OAuthRegistrationEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'registration_id', foreignKeyConstraintName: 'app_oauth_grant_results_registration_id_fkey' })
  registration?: OAuthRegistrationEntity;

  /** The grant lineage: the connection or developer test whose sign-in obtained the pair (null before decision 066). */
  @Column('uuid', { name: 'lineage_id', nullable: true })
  lineageId!: string | null;

  @Column('uuid', { name: 'tokens_record_id', nullable: true })
  tokensRecordId!: string | null;

  @Column('uuid', { name: 'cleanup_execution_id', nullable: true })
  cleanupExecutionId!: string | null;

  @Column('timestamptz', { name: 'installed_at', nullable: true })
  installedAt!: Date | null;

  @Column('jsonb', { nullable: true })
  revocation!: unknown;

  @Column('timestamptz', { name: 'cleaned_at', nullable: true })
  cleanedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

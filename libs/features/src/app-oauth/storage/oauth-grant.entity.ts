import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { AppConnectionEntity } from '../../apps/storage/app-connection.entity';
import { SealedRecordEntity } from '../../../../platform/src/sealing/storage/sealed-record.entity';
import { OAuthRegistrationEntity } from './oauth-registration.entity';

/**
 * The grant a connection holds (one per connection: a member connection holds its member's own).
 * `tokens_record_id`: the sealed token pair. `version` rises with each saved pair (the
 * compare-and-swap of a refresh); `refresh_intent` marks a refresh in flight (single-flight);
 * one left behind by a lost reply makes the grant `needs_authorization`. `installed_call_id`:
 * the call whose result was installed (GRANT-02).
 */
@Entity({ name: 'app_oauth_grants' })
@Index('app_oauth_grants_developer_test_id_key', ['developerTestId'], { unique: true })
@Index('app_oauth_grants_connection_id_key', ['connectionId'], { unique: true })
@Index('app_oauth_grants_registration_id_idx', ['registrationId'])
export class OAuthGrantEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'app_oauth_grants_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'registration_id' })
  registrationId!: string;

  @ManyToOne(() => OAuthRegistrationEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'registration_id', foreignKeyConstraintName: 'app_oauth_grants_registration_id_fkey' })
  registration?: OAuthRegistrationEntity;

  /** The connection it belongs to, or null for a developer test's. */
  @Column('uuid', { name: 'connection_id', nullable: true })
  connectionId!: string | null;

  @ManyToOne(() => AppConnectionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'connection_id', foreignKeyConstraintName: 'app_oauth_grants_connection_id_fkey' })
  connection?: AppConnectionEntity;

  /** The developer test it belongs to (DEVT-01: the developer's own grant), or null for a connection's. */
  @Column('uuid', { name: 'developer_test_id', nullable: true })
  developerTestId!: string | null;

  // By name: the App catalog (developer tests) builds on App OAuth, not the other way round.
  @ManyToOne('AppDeveloperTestEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'developer_test_id', foreignKeyConstraintName: 'app_oauth_grants_developer_test_id_fkey' })
  developerTest?: object;

  /** active | needs_authorization */
  @Column('text')
  state!: string;

  @Column('uuid', { name: 'tokens_record_id' })
  tokensRecordId!: string;

  @ManyToOne(() => SealedRecordEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'tokens_record_id', foreignKeyConstraintName: 'app_oauth_grants_tokens_record_id_fkey' })
  tokensRecord?: SealedRecordEntity;

  @Column('integer', { default: 1 })
  version!: number;

  @Column('text')
  resource!: string;

  @Column('text', { nullable: true })
  scope!: string | null;

  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt!: Date | null;

  @Column('uuid', { name: 'refresh_intent', nullable: true })
  refreshIntent!: string | null;

  @Column('timestamptz', { name: 'refresh_intent_at', nullable: true })
  refreshIntentAt!: Date | null;

  /** The scope a 403 `insufficient_scope` asked for: the next authorization asks for the union (scope step-up). */
  @Column('text', { name: 'step_up_scope', nullable: true })
  stepUpScope!: string | null;

  /** Step-ups authorized in a row; a few at most (STEP_UP_LIMIT). */
  @Column('integer', { name: 'step_ups', default: 0 })
  stepUps!: number;

  @Column('text', { name: 'installed_call_id' })
  installedCallId!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { AppConnectionEntity } from '../../apps/storage/app-connection.entity';
import { SealedRecordEntity } from '../../../../platform/src/sealing/storage/sealed-record.entity';
import { OAuthRegistrationEntity } from './oauth-registration.entity';

/**
 * One authorization request handed out by `POST /v1/connections/{id}/authorize`: valid once,
 * for 10 minutes, at its registration's callback only. `state_hash` is the SHA-256 of the state
 * (the state itself is only in the URL); the PKCE verifier is sealed.
 */
@Entity({ name: 'app_oauth_authorizations' })
@Index('app_oauth_authorizations_developer_test_id_idx', ['developerTestId'])
@Index('app_oauth_authorizations_state_hash_key', ['stateHash'], { unique: true })
@Index('app_oauth_authorizations_connection_id_idx', ['connectionId'])
export class OAuthAuthorizationEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'app_oauth_authorizations_pkey' })
  id!: string;

  @Column('uuid', { name: 'registration_id' })
  registrationId!: string;

  @ManyToOne(() => OAuthRegistrationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'registration_id', foreignKeyConstraintName: 'app_oauth_authorizations_registration_id_fkey' })
  registration?: OAuthRegistrationEntity;

  /** The connection it belongs to, or null for a developer test's. */
  @Column('uuid', { name: 'connection_id', nullable: true })
  connectionId!: string | null;

  @ManyToOne(() => AppConnectionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'connection_id', foreignKeyConstraintName: 'app_oauth_authorizations_connection_id_fkey' })
  connection?: AppConnectionEntity;

  /** The developer test it belongs to (DEVT-01: the developer's own grant), or null for a connection's. */
  @Column('uuid', { name: 'developer_test_id', nullable: true })
  developerTestId!: string | null;

  // By name: the App catalog (developer tests) builds on App OAuth, not the other way round.
  @ManyToOne('AppDeveloperTestEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'developer_test_id', foreignKeyConstraintName: 'app_oauth_authorizations_developer_test_id_fkey' })
  developerTest?: object;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  /** The member who asked: the exchange runs as this member. */
  @Column('uuid', { name: 'member_id' })
  memberId!: string;

  @Column('bytea', { name: 'state_hash' })
  stateHash!: Buffer;

  @Column('uuid', { name: 'verifier_record_id' })
  verifierRecordId!: string;

  @ManyToOne(() => SealedRecordEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'verifier_record_id', foreignKeyConstraintName: 'app_oauth_authorizations_verifier_record_id_fkey' })
  verifierRecord?: SealedRecordEntity;

  /** The RFC 8707 resource indicator sent on every request of this grant. */
  @Column('text')
  resource!: string;

  @Column('text', { nullable: true })
  scope!: string | null;

  /**
   * How the browser leg is bound to the member who asked (decision 066): `browser` (their
   * signed-in browser opened the start URL), `loopback` (a listener on their machine), or null
   * while nobody has bound it yet (the callback refuses it).
   */
  @Column('text', { nullable: true })
  binding!: string | null;

  /** SHA-256 of the binding cookie the start URL set in the member's browser (`browser`). */
  @Column('bytea', { name: 'browser_hash', nullable: true })
  browserHash!: Buffer | null;

  /** The loopback listener the callback relays the answer to (`loopback`). */
  @Column('text', { name: 'loopback_redirect', nullable: true })
  loopbackRedirect!: string | null;

  /** The authorization server's URL for this request, sealed: shown only to the member who binds it. */
  @Column('uuid', { name: 'request_record_id', nullable: true })
  requestRecordId!: string | null;

  @ManyToOne(() => SealedRecordEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'request_record_id', foreignKeyConstraintName: 'app_oauth_authorizations_request_record_id_fkey' })
  requestRecord?: SealedRecordEntity;

  @Column('text', { name: 'return_to', nullable: true })
  returnTo!: string | null;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;

  @Column('timestamptz', { name: 'used_at', nullable: true })
  usedAt!: Date | null;

  @Column('uuid', { name: 'exchange_execution_id', nullable: true })
  exchangeExecutionId!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

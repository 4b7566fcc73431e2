import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { SealedRecordEntity } from '../../../../platform/src/sealing/storage/sealed-record.entity';

/**
 * One OAuth client at one authorization server, keyed by issuer (SEP-2352): shared by every
 * connection and developer test that authorizes there, across organizations. Its redirect URI is
 * its own (`/v1/oauth/{id}/callback`, the mix-up defence). `method`: `pre_registered`,
 * `metadata_document` (a Client ID Metadata Document served at `/v1/oauth/{id}/client-metadata.json`,
 * whose URL is the `client_id`) or `dynamic` (RFC 7591); OpenBot makes at most one of the last two
 * per issuer. The client (its secret) is sealed. `metadata`: the authorization-server metadata as
 * discovery checked it.
 */
@Entity({ name: 'app_oauth_registrations' })
@Index('app_oauth_registrations_issuer_client_id_key', ['issuer', 'clientId'], { unique: true })
@Index('app_oauth_registrations_made_issuer_key', ['issuer'], { unique: true, where: `method IN ('dynamic', 'metadata_document')` })
export class OAuthRegistrationEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'app_oauth_registrations_pkey' })
  id!: string;

  @Column('text')
  issuer!: string;

  @Column('text', { name: 'client_id' })
  clientId!: string;

  @Column('text')
  method!: string;

  @Column('uuid', { name: 'client_record_id' })
  clientRecordId!: string;

  @ManyToOne(() => SealedRecordEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'client_record_id', foreignKeyConstraintName: 'app_oauth_registrations_client_record_id_fkey' })
  clientRecord?: SealedRecordEntity;

  @Column('jsonb')
  metadata!: unknown;

  @Column('text', { name: 'redirect_uri' })
  redirectUri!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OAuthRegistrationEntity } from './oauth-registration.entity';

/**
 * The grant-use table (GRANT-05): who uses a grant scope (one issuer and OAuth client, across
 * every organization). `kind`: `holder` (a connection or developer test holds an authorization),
 * `send` (a code exchange in flight), `revocation` (a saved revocation intent, GRANT-07). Each
 * row changes in the transaction of what it describes; cleanup reads only this table.
 */
@Entity({ name: 'app_oauth_grant_uses' })
@Index('app_oauth_grant_uses_registration_id_kind_idx', ['registrationId', 'kind'])
@Index('app_oauth_grant_uses_lineage_id_idx', ['lineageId'])
export class OAuthGrantUseEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'app_oauth_grant_uses_pkey' })
  id!: string;

  @Column('uuid', { name: 'registration_id' })
  registrationId!: string;

  @ManyToOne(() => OAuthRegistrationEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'registration_id', foreignKeyConstraintName: 'app_oauth_grant_uses_registration_id_fkey' })
  registration?: OAuthRegistrationEntity;

  @Column('text')
  kind!: string;

  /** connection | developer_test | execution | grant_result */
  @Column('text', { name: 'holder_type' })
  holderType!: string;

  @Column('uuid', { name: 'holder_id' })
  holderId!: string;

  /** The grant lineage the row is about (the connection or developer test); cleanup waits only for its own (GRANT-04). */
  @Column('uuid', { name: 'lineage_id', nullable: true })
  lineageId!: string | null;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

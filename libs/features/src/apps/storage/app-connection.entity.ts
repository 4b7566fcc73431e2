import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { MemberEntity } from '../../../../platform/src/organizations/storage/member.entity';
import { OrganizationEntity } from '../../../../platform/src/organizations/storage/organization.entity';
import { SealedRecordEntity } from '../../../../platform/src/sealing/storage/sealed-record.entity';
import { AppEntity } from './app.entity';

/**
 * A prepared connection to one remote of an App (GRANT-06), of the organization or of one member.
 * `variables` and `headers` map each name to its reference, or to null for a literal value, which
 * is sealed in `secrets_record_id`. `revision` rises by one with each accepted change; `generation`
 * names the grant the connection uses (CONN-01). `deleting_at`: a cleanup was accepted.
 */
@Entity({ name: 'app_connections' })
@Index('app_connections_organization_id_id_idx', ['organizationId', 'id'])
@Index('app_connections_app_id_idx', ['appId'])
export class AppConnectionEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'app_connections_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'app_connections_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Column('uuid', { name: 'app_id' })
  appId!: string;

  @ManyToOne(() => AppEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'app_id', foreignKeyConstraintName: 'app_connections_app_id_fkey' })
  app?: AppEntity;

  /** `organization` or `member`. */
  @Column('text')
  owner!: string;

  @Column('uuid', { name: 'member_id', nullable: true })
  memberId!: string | null;

  @ManyToOne(() => MemberEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'member_id', foreignKeyConstraintName: 'app_connections_member_id_fkey' })
  member?: MemberEntity;

  /** The selected remote's URL template, as the card gave it. */
  @Column('text')
  remote!: string;

  /** The remote exactly as it was prepared (GRANT-06): a later card refresh does not change it. */
  @Column('jsonb', { name: 'prepared_remote' })
  preparedRemote!: unknown;

  @Column('jsonb')
  variables!: unknown;

  @Column('jsonb')
  headers!: unknown;

  @Column('uuid', { name: 'secrets_record_id', nullable: true })
  secretsRecordId!: string | null;

  @ManyToOne(() => SealedRecordEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'secrets_record_id', foreignKeyConstraintName: 'app_connections_secrets_record_id_fkey' })
  secretsRecord?: SealedRecordEntity;

  /** ready | needs_authorization | failed */
  @Column('text')
  state!: string;

  @Column('integer', { default: 1 })
  revision!: number;

  @Column('integer', { default: 1 })
  generation!: number;

  /** `legacy` or `modern`, as the last probe negotiated. */
  @Column('text', { nullable: true })
  era!: string | null;

  @Column('text', { name: 'protocol_version', nullable: true })
  protocolVersion!: string | null;

  /** Warnings of the last discovery (a cut tool list, refused tools). */
  @Column('jsonb', { default: () => "'[]'" })
  warnings!: unknown;

  /** Why the last probe failed: a public category and the error ID of its sealed record. */
  @Column('text', { nullable: true })
  category!: string | null;

  @Column('text', { name: 'error_id', nullable: true })
  errorId!: string | null;

  @Column('timestamptz', { name: 'deleting_at', nullable: true })
  deletingAt!: Date | null;

  @Column('timestamptz', { name: 'checked_at', nullable: true })
  checkedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

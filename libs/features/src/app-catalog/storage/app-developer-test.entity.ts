import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { AppEntity } from '../../apps/storage/app.entity';
import { SealedRecordEntity } from '../../../../platform/src/sealing/storage/sealed-record.entity';

/** A developer test of an App (DEVT-01): its original caller, its execution, and what its run saw. */
@Entity({ name: 'app_developer_tests' })
@Index('app_developer_tests_app_id_idx', ['appId'])
export class AppDeveloperTestEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'app_developer_tests_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'app_id' })
  appId!: string;

  @ManyToOne(() => AppEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'app_id', foreignKeyConstraintName: 'app_developer_tests_app_id_fkey' })
  app?: AppEntity;

  /** The member who started it (the original caller). */
  @Column('uuid', { name: 'member_id' })
  memberId!: string;

  @Column('uuid', { name: 'execution_id' })
  executionId!: string;

  @Column('text')
  remote!: string;

  /** The remote as checked at the start (its values were checked against it); null for tests started before values existed. */
  @Column('jsonb', { name: 'prepared_remote', nullable: true })
  preparedRemote!: unknown;

  /** URL variables as stored: a literal is null here (sealed), a Vault reference as given. */
  @Column('jsonb', { default: {} })
  variables!: unknown;

  /** Headers as stored, like `variables`. */
  @Column('jsonb', { default: {} })
  headers!: unknown;

  /** The sealed literal values; removed with the run's end (nothing sends them after it). */
  @Column('uuid', { name: 'secrets_record_id', nullable: true })
  secretsRecordId!: string | null;

  @ManyToOne(() => SealedRecordEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'secrets_record_id', foreignKeyConstraintName: 'app_developer_tests_secrets_record_id_fkey' })
  secretsRecord?: SealedRecordEntity;

  /** Where the developer signs in while the test is `needs_authorization` (shown to that developer only). */
  @Column('text', { name: 'authorization_url', nullable: true })
  authorizationUrl!: string | null;

  /** `running`, `needs_authorization` (waiting for its developer's sign-in), then `completed` or `failed`. */
  @Column('text')
  state!: string;

  /** `{ state, era, protocolVersion, category }` of the probe. */
  @Column('jsonb', { nullable: true })
  connection!: unknown;

  /** Tool names listed. */
  @Column('jsonb', { nullable: true })
  tools!: unknown;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

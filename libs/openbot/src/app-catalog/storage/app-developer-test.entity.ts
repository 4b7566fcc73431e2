import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { AppEntity } from '../../apps/storage/app.entity';

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

  /** `running`, then `completed` or `failed`. */
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

import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../organizations/storage/organization.entity';

/**
 * One model call's usage (USE-01..04): one row per call ID, so a duplicate result never charges
 * twice. `unknown` keeps its estimate and call ID and is never recorded as zero. Bot and Chat are
 * plain IDs: billing outlives them.
 */
@Entity({ name: 'usage_records' })
@Index('usage_records_call_id_key', ['callId'], { unique: true })
@Index('usage_records_organization_id_id_idx', ['organizationId', 'id'])
export class UsageRecordEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'usage_records_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'usage_records_organization_id_fkey' })
  organization?: OrganizationEntity;

  /** The billing identity: who the call was made for (a member or a service). */
  @Column('text', { name: 'scope_kind' })
  scopeKind!: string;

  @Column('uuid', { name: 'scope_id' })
  scopeId!: string;

  @Column('uuid', { name: 'bot_id', nullable: true })
  botId!: string | null;

  @Column('uuid', { name: 'chat_id', nullable: true })
  chatId!: string | null;

  @Column('uuid', { name: 'turn_id', nullable: true })
  turnId!: string | null;

  @Column('uuid', { name: 'execution_id' })
  executionId!: string;

  @Column('uuid', { name: 'call_id' })
  callId!: string;

  @Column('text')
  model!: string;

  /** confirmed | unknown */
  @Column('text')
  status!: string;

  @Column('integer', { name: 'input_tokens', nullable: true })
  inputTokens!: number | null;

  @Column('integer', { name: 'output_tokens', nullable: true })
  outputTokens!: number | null;

  /** The request's token estimate, kept apart from confirmed counts (USE-04). */
  @Column('integer', { name: 'estimated_input_tokens', nullable: true })
  estimatedInputTokens!: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'settled_at', nullable: true })
  settledAt!: Date | null;
}

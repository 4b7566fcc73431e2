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
@Index('usage_records_organization_id_created_at_idx', ['organizationId', 'createdAt'])
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

  /** The part of `input_tokens` read from a provider cache; null when not reported. */
  @Column('integer', { name: 'cached_input_tokens', nullable: true })
  cachedInputTokens!: number | null;

  /** The price version in force when the call started (null: no price, the call cost 0). */
  @Column('uuid', { name: 'price_id', nullable: true })
  priceId!: string | null;

  /** Computed once, when the usage is confirmed; null while it is unknown. Never rewritten. */
  @Column('bigint', { name: 'cost_micros', nullable: true })
  costMicros!: string | null;

  /** What the call reserved: an unknown record keeps it on budgets and credits until settled or released. */
  @Column('bigint', { name: 'reserved_micros', nullable: true })
  reservedMicros!: string | null;

  @Column('bigint', { name: 'reserved_tokens', nullable: true })
  reservedTokens!: string | null;

  /** An owner or admin released an unknown record's reservation. */
  @Column('timestamptz', { name: 'released_at', nullable: true })
  releasedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'settled_at', nullable: true })
  settledAt!: Date | null;
}

import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../organizations/storage/organization.entity';

/**
 * The estimate an attempt of a model call reserves while it runs (USE-02, USE-03): opened when
 * the attempt is sent, released when the call ends — with its result, its failure, the end of
 * its execution, or the next attempt after a takeover. Open holds are what reservations and
 * rate limits count; they never become charges.
 */
@Entity({ name: 'usage_holds' })
@Index('usage_holds_execution_id_call_key_attempt_key', ['executionId', 'callKey', 'attempt'], { unique: true })
@Index('usage_holds_organization_id_open_idx', ['organizationId'], { where: '"released_at" IS NULL' })
export class UsageHoldEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'usage_holds_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'usage_holds_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Column('uuid', { name: 'execution_id' })
  executionId!: string;

  @Column('text', { name: 'call_key' })
  callKey!: string;

  @Column('integer')
  attempt!: number;

  @Column('integer', { name: 'estimated_input_tokens' })
  estimatedInputTokens!: number;

  /** The billing identity the reservation counts against (budgets by member and by Bot). */
  @Column('text', { name: 'scope_kind', nullable: true })
  scopeKind!: string | null;

  @Column('uuid', { name: 'scope_id', nullable: true })
  scopeId!: string | null;

  @Column('uuid', { name: 'bot_id', nullable: true })
  botId!: string | null;

  /** The price version in force when the attempt started: its usage is charged at this price. */
  @Column('uuid', { name: 'price_id', nullable: true })
  priceId!: string | null;

  /** The input estimate plus `max_tokens`, priced and in tokens: what budgets and credits count while it is open. */
  @Column('bigint', { name: 'reserved_micros', default: 0 })
  reservedMicros!: string;

  @Column('bigint', { name: 'reserved_tokens', default: 0 })
  reservedTokens!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'released_at', nullable: true })
  releasedAt!: Date | null;
}

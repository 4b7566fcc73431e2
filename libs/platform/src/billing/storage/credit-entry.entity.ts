import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../organizations/storage/organization.entity';

/**
 * The credits ledger (PLAT-08, USE-01): append-only. `grant` (positive) and `adjustment`
 * (negative) come from the platform administrator, with an optional command key so a retried
 * grant posts once; `charge` (negative) is posted with its confirmed usage record, at most one
 * per record (the unique `usage_record_id`).
 */
@Entity({ name: 'credit_entries' })
@Index('credit_entries_organization_id_id_idx', ['organizationId', 'id'])
@Index('credit_entries_usage_record_id_key', ['usageRecordId'], { unique: true })
@Index('credit_entries_organization_id_command_key_key', ['organizationId', 'commandKey'], { unique: true })
export class CreditEntryEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'credit_entries_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'credit_entries_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Column('bigint', { name: 'amount_micros' })
  amountMicros!: string;

  /** grant | charge | adjustment */
  @Column('text')
  kind!: string;

  @Column('text')
  reason!: string;

  @Column('uuid', { name: 'usage_record_id', nullable: true })
  usageRecordId!: string | null;

  /** The grant's `Idempotency-Key`, with the hash of the body it was first used with. */
  @Column('text', { name: 'command_key', nullable: true })
  commandKey!: string | null;

  @Column('bytea', { name: 'input_hash', nullable: true })
  inputHash!: Buffer | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

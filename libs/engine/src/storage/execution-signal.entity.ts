import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * Stored signals (DurableDeferred): a signal is a row first, so one that arrives before its
 * waiter saved its waiting state is still found (the lost-wake-up bug). Cancel requests are
 * signals with their own cancel phase number (EXE-15).
 */
@Entity({ name: 'execution_signals' })
@Index('execution_signals_pending_idx', ['executionId', 'id'], { where: 'consumed_at IS NULL' })
export class ExecutionSignalEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'execution_signals_pkey' })
  id!: string;

  @Column('uuid', { name: 'execution_id' })
  executionId!: string;

  @Column('text')
  name!: string;

  @Column('integer', { name: 'cancel_phase', nullable: true })
  cancelPhase!: number | null;

  @Column('text', { name: 'key_id', nullable: true })
  keyId!: string | null;

  @Column('bytea', { nullable: true })
  data!: Buffer | null;

  @Column('timestamptz', { name: 'consumed_at', nullable: true })
  consumedAt!: Date | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

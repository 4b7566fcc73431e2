import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { SealedRecordEntity } from '../../sealing/storage/sealed-record.entity';

/** A server fault: its public face (ID, category) in clear, its full cause in a sealed record (ERR-01). */
@Entity({ name: 'error_records' })
export class ErrorRecordEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'error_records_pkey' })
  id!: string;

  @Column('text')
  category!: string;

  /** Where it happened, e.g. `http POST /v1/organizations`; never user input. */
  @Column('text')
  origin!: string;

  @Index('error_records_cause_id_idx')
  @Column('uuid', { name: 'cause_id' })
  causeId!: string;

  @ManyToOne(() => SealedRecordEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'cause_id', foreignKeyConstraintName: 'error_records_cause_id_fkey' })
  cause?: SealedRecordEntity;

  /**
   * What the failure says of itself that is safe to show, in clear (decision 082): a model
   * provider's `{ status, code, message }`, scrubbed. Null for every other failure.
   */
  @Column('jsonb', { nullable: true })
  detail!: Record<string, unknown> | null;

  /** The execution whose failure this is, when it happened in one (ERR-04 links release failures). */
  @Index('error_records_execution_id_idx')
  @Column('uuid', { name: 'execution_id', nullable: true })
  executionId!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * The common call log (CALL-01..07, STC-10): each outside call saves its intent, then marks
 * itself sending, then saves its result. Rows are never deleted: full history stays for audit.
 */
@Entity({ name: 'execution_calls' })
@Index('execution_calls_key_attempt_idx', ['executionId', 'callKey', 'attempt'], { unique: true })
export class ExecutionCallEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'execution_calls_pkey' })
  id!: string;

  @Column('uuid', { name: 'execution_id' })
  executionId!: string;

  /** Stable within the execution: `<step>:<name>`; the same key after a takeover finds the saved call. */
  @Column('text', { name: 'call_key' })
  callKey!: string;

  /** What was called: model | tool | app | oauth | channel | other (STC-10). */
  @Column('text', { default: 'other' })
  kind!: string;

  @Column('integer')
  step!: number;

  /** Each repeated request is a new attempt (CALL-04). */
  @Column('integer')
  attempt!: number;

  /** The generation that made the call: a late result of an old one is saved, not published (CALL-05). */
  @Column('integer')
  generation!: number;

  /** `safe` calls may be retried with the same idempotency key (CALL-02); unsafe ones may not. */
  @Column('boolean')
  safe!: boolean;

  /** intent | sending | succeeded | failed | unknown */
  @Column('text')
  status!: string;

  @Column('text', { name: 'idempotency_key' })
  idempotencyKey!: string;

  @Column('text', { name: 'key_id', nullable: true })
  keyId!: string | null;

  /** Sealed JSON result. */
  @Column('bytea', { nullable: true })
  result!: Buffer | null;

  /** The error record of a call that failed for good (ERR-01): a new owner reuses it instead of sending again. */
  @Column('uuid', { name: 'error_id', nullable: true })
  errorId!: string | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}

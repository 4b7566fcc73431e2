import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The append-only event log (EVT-01): seq, type, step and attempt in clear, the payload sealed. */
@Entity({ name: 'execution_events' })
export class ExecutionEventEntity {
  @PrimaryColumn('uuid', { name: 'execution_id', primaryKeyConstraintName: 'execution_events_pkey' })
  executionId!: string;

  @PrimaryColumn('integer', { primaryKeyConstraintName: 'execution_events_pkey' })
  seq!: number;

  @Column('text')
  type!: string;

  @Column('integer', { nullable: true })
  step!: number | null;

  @Column('integer', { nullable: true })
  attempt!: number | null;

  @Column('timestamptz', { default: () => 'now()' })
  at!: Date;

  @Column('text', { name: 'key_id', nullable: true })
  keyId!: string | null;

  /** Sealed JSON payload; null for events with no payload. */
  @Column('bytea', { nullable: true })
  data!: Buffer | null;
}

import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * How long an execution has been paused in all, and since when it is paused now (engine clock
 * times). The pause and resume commands keep it; a Turn subtracts it from its time (TASK-03).
 */
@Entity({ name: 'execution_pauses' })
export class ExecutionPauseEntity {
  @PrimaryColumn('uuid', { name: 'execution_id', primaryKeyConstraintName: 'execution_pauses_pkey' })
  executionId!: string;

  @Column('timestamptz', { name: 'paused_at', nullable: true })
  pausedAt!: Date | null;

  @Column('bigint', { name: 'paused_ms', default: '0' })
  pausedMs!: string;
}

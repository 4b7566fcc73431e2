import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A durable timer (DurableClock): written with the waiting state, fired by a deferred queue job. */
@Entity({ name: 'execution_timers' })
@Index('execution_timers_execution_id_idx', ['executionId'])
export class ExecutionTimerEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'execution_timers_pkey' })
  id!: string;

  @Column('uuid', { name: 'execution_id' })
  executionId!: string;

  @Column('timestamptz', { name: 'due_at' })
  dueAt!: Date;

  @Column('timestamptz', { name: 'fired_at', nullable: true })
  firedAt!: Date | null;
}

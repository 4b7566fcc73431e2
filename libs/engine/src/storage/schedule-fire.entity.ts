import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One fire of a schedule: unique per (schedule, fire time), written with its execution (STC-01). */
@Entity({ name: 'schedule_fires' })
export class ScheduleFireEntity {
  @PrimaryColumn('uuid', { name: 'schedule_id', primaryKeyConstraintName: 'schedule_fires_pkey' })
  scheduleId!: string;

  @PrimaryColumn('timestamptz', { name: 'fire_at', primaryKeyConstraintName: 'schedule_fires_pkey' })
  fireAt!: Date;

  @Column('uuid', { name: 'execution_id' })
  executionId!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

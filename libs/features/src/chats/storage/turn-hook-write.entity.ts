import { CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** One write a Turn plugin made at a named step: its key makes a replayed hook skip it (STC-08). */
@Entity({ name: 'turn_hook_writes' })
export class TurnHookWriteEntity {
  @PrimaryColumn('uuid', { name: 'execution_id', primaryKeyConstraintName: 'turn_hook_writes_pkey' })
  executionId!: string;

  @PrimaryColumn('text', { primaryKeyConstraintName: 'turn_hook_writes_pkey' })
  plugin!: string;

  @PrimaryColumn('text', { primaryKeyConstraintName: 'turn_hook_writes_pkey' })
  point!: string;

  @PrimaryColumn('integer', { primaryKeyConstraintName: 'turn_hook_writes_pkey' })
  step!: number;

  @PrimaryColumn('text', { primaryKeyConstraintName: 'turn_hook_writes_pkey' })
  key!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One execution waiting for another's end (not its child): written with the waiter's waiting
 * state, read and deleted in the target's end transaction, which wakes the waiter (waits.ts).
 */
@Entity({ name: 'execution_awaits' })
@Index('execution_awaits_waiter_id_idx', ['waiterId'])
export class ExecutionAwaitEntity {
  @PrimaryColumn('uuid', { name: 'target_id', primaryKeyConstraintName: 'execution_awaits_pkey' })
  targetId!: string;

  @PrimaryColumn('uuid', { name: 'waiter_id', primaryKeyConstraintName: 'execution_awaits_pkey' })
  waiterId!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

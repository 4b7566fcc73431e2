import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One of the shared memory helper-call permits (LIM-01), numbered 1 … the cap, held by a learning
 * execution (not a node): a takeover keeps its permit, so it never resets the shared limit.
 */
@Entity({ name: 'memory_permits' })
@Index('memory_permits_execution_id_key', ['executionId'], { unique: true })
export class MemoryPermitEntity {
  @PrimaryColumn('integer', { primaryKeyConstraintName: 'memory_permits_pkey' })
  slot!: number;

  @Column('uuid', { name: 'execution_id' })
  executionId!: string;

  @Column('timestamptz', { name: 'taken_at', default: () => 'now()' })
  takenAt!: Date;
}

import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The last plan a Turn's `update_plan` tool saved (decision 025): written with its checkpoint, read by `GET /v1/executions/{id}/plan`. */
@Entity({ name: 'execution_plans' })
export class ExecutionPlanEntity {
  @PrimaryColumn('uuid', { name: 'execution_id', primaryKeyConstraintName: 'execution_plans_pkey' })
  executionId!: string;

  /** `[{ title, status }]` */
  @Column('jsonb')
  steps!: unknown;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;
}

import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A Turn's limits and what it spent, as its last checkpoint saved them (TASK-01): written in the
 * checkpoint's transaction, read by `GET /v1/executions/{id}`. The Turn's own state stays the
 * source its limits are checked against; this row only shows them.
 */
@Entity({ name: 'execution_limits' })
export class ExecutionLimitsEntity {
  @PrimaryColumn('uuid', { name: 'execution_id', primaryKeyConstraintName: 'execution_limits_pkey' })
  executionId!: string;

  @Column('integer', { name: 'max_steps' })
  maxSteps!: number;

  @Column('integer', { name: 'max_seconds' })
  maxSeconds!: number;

  @Column('integer', { name: 'max_output_tokens' })
  maxOutputTokens!: number;

  /** The Bot's `limits.maxCostMicros` (billing's); null: none. */
  @Column('bigint', { name: 'max_cost_micros', nullable: true })
  maxCostMicros!: string | null;

  @Column('integer')
  steps!: number;

  @Column('bigint', { name: 'output_tokens' })
  outputTokens!: string;

  /** Milliseconds counted before `countingSince`. */
  @Column('bigint', { name: 'active_ms' })
  activeMs!: string;

  /** Since when the time counts (engine clock); null while it does not (waiting only for approvals). */
  @Column('timestamptz', { name: 'counting_since', nullable: true })
  countingSince!: Date | null;

  /** The paused milliseconds already taken out of `countingSince`. */
  @Column('bigint', { name: 'paused_ms_seen' })
  pausedMsSeen!: string;

  /** The Turn's own stop when it had one: `stop` or `length` (not a limit), `max-cost` or `budget` (billing's). */
  @Column('text', { name: 'final_stop', nullable: true })
  finalStop!: string | null;
}

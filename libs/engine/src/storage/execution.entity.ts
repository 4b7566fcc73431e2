import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A durable execution (EXE-01). The workflow's state is sealed (`data`); only safe values are in
 * clear: state, phase, step, generation, lease, links, and a failure's category and error ID.
 * The engine reads and writes this table with prepared raw SQL (sql/executions.ts); this entity exists so
 * the schema-drift test can compare it with the migrations.
 */
@Entity({ name: 'executions' })
@Index('executions_resource_idx', ['resourceType', 'resourceId'])
@Index('executions_parent_id_idx', ['parentId'])
@Index('executions_organization_id_id_idx', ['organizationId', 'id'])
@Index('executions_leased_owner_idx', ['ownerNode'], { where: 'lease_until IS NOT NULL' })
@Index('executions_unsettled_idx', ['updatedAt'], { where: "state IN ('waiting', 'outcome_unknown', 'cancelling')" })
@Index('executions_active_idx', ['workflow', 'state'], { where: "state NOT IN ('completed', 'failed', 'cancelled', 'interrupted')" })
@Index('executions_deltas_prunable_idx', ['endedAt'], { where: 'ended_at IS NOT NULL AND deltas_pruned_at IS NULL' })
@Index('executions_payloads_prunable_idx', ['endedAt'], { where: 'ended_at IS NOT NULL AND payloads_pruned_at IS NULL' })
export class ExecutionEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'executions_pkey' })
  id!: string;

  @Column('text')
  workflow!: string;

  /** null: a platform execution, invisible to organization endpoints (IDN-11). */
  @Column('uuid', { name: 'organization_id', nullable: true })
  organizationId!: string | null;

  /** `member` or `service` (IDN-10). */
  @Column('text', { name: 'scope_kind' })
  scopeKind!: string;

  @Column('uuid', { name: 'scope_id' })
  scopeId!: string;

  @Column('text', { name: 'resource_type', nullable: true })
  resourceType!: string | null;

  @Column('text', { name: 'resource_id', nullable: true })
  resourceId!: string | null;

  @Column('uuid', { name: 'parent_id', nullable: true })
  parentId!: string | null;

  /** An attached child is waited for by its parent; a detached one may outlive it (EXE-13). */
  @Column('boolean', { default: true })
  attached!: boolean;

  @Column('text')
  state!: string;

  @Column('integer', { default: 0 })
  step!: number;

  @Column('integer', { default: 1 })
  generation!: number;

  @Column('text', { name: 'owner_node', nullable: true })
  ownerNode!: string | null;

  @Column('timestamptz', { name: 'lease_until', nullable: true })
  leaseUntil!: Date | null;

  /** The number of the latest cancel request (EXE-15). */
  @Column('integer', { name: 'cancel_phase', default: 0 })
  cancelPhase!: number;

  @Column('text', { name: 'key_id' })
  keyId!: string;

  /** Sealed JSON: `{ state, wake, wait }` of the workflow (SEC-01). */
  @Column('bytea')
  data!: Buffer;

  /** The key of the sealed `identity`; null when the execution was submitted without one. */
  @Column('text', { name: 'identity_key_id', nullable: true })
  identityKeyId!: string | null;

  /**
   * Sealed JSON: who the work is for and acts as (IDN-01, the product's ExecutionIdentity),
   * checked on restore and before outside sends (IDN-06). Never in clear (SEC-01).
   */
  @Column('bytea', { nullable: true })
  identity!: Buffer | null;

  @Column('uuid', { name: 'error_id', nullable: true })
  errorId!: string | null;

  /** Set once another execution waited for this one's end: its end then wakes those waiters (waits.ts). */
  @Column('boolean', { default: false })
  awaited!: boolean;

  /** A paused execution waits and is not run until resumed (TASK-02); a flag, not a state. */
  @Column('boolean', { default: false })
  paused!: boolean;

  @Column('text', { nullable: true })
  category!: string | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'ended_at', nullable: true })
  endedAt!: Date | null;

  /** When retention removed this ended execution's `text.delta` events (docs/decisions/041-retention.md). */
  @Column('timestamptz', { name: 'deltas_pruned_at', nullable: true })
  deltasPrunedAt!: Date | null;

  /** When retention cleared the saved results of this ended execution's calls (decision 041). */
  @Column('timestamptz', { name: 'payloads_pruned_at', nullable: true })
  payloadsPrunedAt!: Date | null;
}

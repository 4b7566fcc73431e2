import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../../../platform/src/organizations/storage/organization.entity';

/**
 * A tool call waiting for (or given) a person's decision (decision 025). Written by the Turn's
 * checkpoint together with the saved call (APPR-01); decided by the approvals command; expired or
 * cancelled by the Turn itself. `state`: pending | approved | denied | expired | cancelled.
 */
@Entity({ name: 'approvals' })
@Index('approvals_execution_id_step_call_id_key', ['executionId', 'step', 'callId'], { unique: true })
@Index('approvals_organization_id_id_idx', ['organizationId', 'id'])
@Index('approvals_chat_id_idx', ['chatId'])
export class ApprovalEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'approvals_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'approvals_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Column('uuid', { name: 'execution_id' })
  executionId!: string;

  @Column('uuid', { name: 'chat_id' })
  chatId!: string;

  // By name: Chats build on Approvals (the Turn requests them through its gate), not the other way round.
  @ManyToOne('ChatEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'chat_id', foreignKeyConstraintName: 'approvals_chat_id_fkey' })
  chat?: object;

  @Column('uuid', { name: 'turn_id' })
  turnId!: string;

  @ManyToOne('ChatTurnEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'turn_id', foreignKeyConstraintName: 'approvals_turn_id_fkey' })
  turn?: object;

  @Column('text', { name: 'call_id' })
  callId!: string;

  /** The model step whose call it is. */
  @Column('integer')
  step!: number;

  @Column('text', { name: 'tool_name' })
  toolName!: string;

  /** The call's arguments as the model sent them (the JSON text). */
  @Column('text')
  arguments!: string;

  @Column('text', { default: 'pending' })
  state!: string;

  @Column('timestamptz', { name: 'requested_at' })
  requestedAt!: Date;

  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt!: Date | null;

  @Column('timestamptz', { name: 'decided_at', nullable: true })
  decidedAt!: Date | null;

  /** member | service */
  @Column('text', { name: 'decided_by_kind', nullable: true })
  decidedByKind!: string | null;

  @Column('uuid', { name: 'decided_by_id', nullable: true })
  decidedById!: string | null;

  @Column('text', { nullable: true })
  reason!: string | null;

  /** Roles the tool names as approvers besides the defaults (decision 075). */
  @Column('text', { name: 'approver_roles', array: true, default: () => "'{}'" })
  approverRoles!: string[];

  /** Members the tool names as approvers besides the defaults (decision 075). */
  @Column('uuid', { name: 'approver_member_ids', array: true, default: () => "'{}'" })
  approverMemberIds!: string[];

  /** The tool asks for a second person: the Turn's own member may not decide (decision 075). */
  @Column('boolean', { name: 'second_person', default: false })
  secondPerson!: boolean;

  /** The permissions the Turn runs with (its identity's limits); null on rows written before decision 075. */
  @Column('text', { name: 'turn_permissions', array: true, nullable: true })
  turnPermissions!: string[] | null;
}

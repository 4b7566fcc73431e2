import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../../../platform/src/organizations/storage/organization.entity';

/**
 * A reminder a Turn's `remind` tool set (APPR-01, FW-06): written in the Turn's checkpoint with
 * the saved call, one per (execution, call), so a replayed call sets it once. Its delivery is an
 * execution of its own waiting on a durable timer (`delivery_execution_id`).
 * `state`: pending | sent | cancelled.
 */
@Entity({ name: 'reminders' })
@Index('reminders_execution_id_call_id_key', ['executionId', 'callId'], { unique: true })
@Index('reminders_chat_id_id_idx', ['chatId', 'id'])
@Index('reminders_organization_id_id_idx', ['organizationId', 'id'])
export class ReminderEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'reminders_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'reminders_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Column('uuid', { name: 'chat_id' })
  chatId!: string;

  // By name: Chats build on Reminders (the remind tool), not the other way round.
  @ManyToOne('ChatEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'chat_id', foreignKeyConstraintName: 'reminders_chat_id_fkey' })
  chat?: object;

  /** The Turn execution whose call set it. */
  @Column('uuid', { name: 'execution_id' })
  executionId!: string;

  @Column('text', { name: 'call_id' })
  callId!: string;

  @Column('text')
  message!: string;

  @Column('timestamptz', { name: 'due_at' })
  dueAt!: Date;

  @Column('text', { default: 'pending' })
  state!: string;

  /** The execution that delivers it when due. */
  @Column('uuid', { name: 'delivery_execution_id' })
  deliveryExecutionId!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'sent_at', nullable: true })
  sentAt!: Date | null;
}

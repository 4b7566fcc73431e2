import { CreateDateColumn, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { BotEntity } from '../../bots/storage/bot.entity';
import { OrganizationEntity } from '../../../../platform/src/organizations/storage/organization.entity';

/**
 * A Chat of an organization with one of its Bots. A Bot with Chats cannot be deleted
 * (ON DELETE RESTRICT): the delete-bot command answers 409 BotHasChats.
 */
@Entity({ name: 'chats' })
@Index('chats_organization_id_id_idx', ['organizationId', 'id'])
@Index('chats_bot_id_idx', ['botId'])
export class ChatEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'chats_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'chats_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Column('uuid', { name: 'bot_id' })
  botId!: string;

  @ManyToOne(() => BotEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'bot_id', foreignKeyConstraintName: 'chats_bot_id_fkey' })
  bot?: BotEntity;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** Set by delete: no input is admitted any more; the rows go once every Turn released (RES-04). */
  @Column('timestamptz', { name: 'closed_at', nullable: true })
  closedAt!: Date | null;

  /** The one advancing Turn (STC-02), or null when the Chat is idle. */
  @Column('uuid', { name: 'active_turn_id', nullable: true })
  activeTurnId!: string | null;

  /** The last message position handed out: messages are ordered by it. */
  @Column('bigint', { name: 'last_position', default: 0 })
  lastPosition!: string;

  /** A task's Chat: the execution whose delegate call created it (decision 025); null for other Chats. */
  @Column('uuid', { name: 'parent_execution_id', nullable: true })
  parentExecutionId!: string | null;

  /** The last Turn number handed out: queued Turns are admitted in this order (STC-03). */
  @Column('integer', { name: 'last_turn_seq', default: 0 })
  lastTurnSeq!: number;
}

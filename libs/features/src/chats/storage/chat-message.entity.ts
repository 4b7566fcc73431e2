import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ChatTurnEntity } from './chat-turn.entity';
import { ChatEntity } from './chat.entity';

/**
 * A message of a Chat. User messages are written when they are admitted; a Turn's assistant and
 * tool messages commit with the Turn's end. `tool_calls` keeps what an assistant step asked for,
 * so later Turns replay the exchange to the model.
 */
@Entity({ name: 'chat_messages' })
@Index('chat_messages_chat_id_position_key', ['chatId', 'position'], { unique: true })
@Index('chat_messages_turn_id_idx', ['turnId'])
export class ChatMessageEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'chat_messages_pkey' })
  id!: string;

  @Column('uuid', { name: 'chat_id' })
  chatId!: string;

  @ManyToOne(() => ChatEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'chat_id', foreignKeyConstraintName: 'chat_messages_chat_id_fkey' })
  chat?: ChatEntity;

  @Column('uuid', { name: 'turn_id' })
  turnId!: string;

  @ManyToOne(() => ChatTurnEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'turn_id', foreignKeyConstraintName: 'chat_messages_turn_id_fkey' })
  turn?: ChatTurnEntity;

  @Column('bigint')
  position!: string;

  /** user | assistant | tool */
  @Column('text')
  role!: string;

  @Column('text')
  content!: string;

  @Column('jsonb', { name: 'tool_calls', nullable: true })
  toolCalls!: unknown;

  @Column('text', { name: 'tool_call_id', nullable: true })
  toolCallId!: string | null;

  /** Files the message carries to the model: a user message's attachments, a tool result's files (STC-09). */
  @Column('uuid', { name: 'file_ids', array: true, default: () => "'{}'" })
  fileIds!: string[];

  /** `task` (a detached task's notice, TASK-04) or `reminder`; null: the input of its Turn's caller, or the Turn's own reply. */
  @Column('text', { nullable: true })
  author!: string | null;

  /** The limit that stopped the Turn (`max-steps`, `max-seconds`, `max-output-tokens`, `max-cost`, `budget`) on its partial reply; null otherwise (decision 084). */
  @Column('text', { nullable: true })
  stop!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

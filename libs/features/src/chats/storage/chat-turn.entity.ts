import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ChatEntity } from './chat.entity';

/**
 * A Turn of a Chat: the input of one identity and the execution that answers it. `queued` Turns
 * wait in `seq` order behind the `running` one; a Turn ends with its execution (STC-02..04).
 */
@Entity({ name: 'chat_turns' })
@Index('chat_turns_chat_id_seq_key', ['chatId', 'seq'], { unique: true })
@Index('chat_turns_execution_id_key', ['executionId'], { unique: true })
@Index('chat_turns_open_idx', ['chatId', 'state'], { where: `"state" <> 'ended'` })
export class ChatTurnEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'chat_turns_pkey' })
  id!: string;

  @Column('uuid', { name: 'chat_id' })
  chatId!: string;

  @ManyToOne(() => ChatEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'chat_id', foreignKeyConstraintName: 'chat_turns_chat_id_fkey' })
  chat?: ChatEntity;

  @Column('integer')
  seq!: number;

  @Column('uuid', { name: 'execution_id' })
  executionId!: string;

  /** queued | running | ended */
  @Column('text')
  state!: string;

  /** The identity whose input started the Turn: only it may steer the Turn (STC-03). */
  @Column('text', { name: 'scope_kind' })
  scopeKind!: string;

  @Column('uuid', { name: 'scope_id' })
  scopeId!: string;

  /**
   * The Turn makes no more model calls: it takes no steering input from then on, so the input of
   * its identity queues a Turn of its own (decision 083). Set under the Chat's row lock.
   */
  @Column('boolean', { name: 'steering_closed', default: false })
  steeringClosed!: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'ended_at', nullable: true })
  endedAt!: Date | null;
}

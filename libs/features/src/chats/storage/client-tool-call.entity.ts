import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ChatTurnEntity } from './chat-turn.entity';

/**
 * A client tool call a Turn waits on: the API caller posts its output, once. The Turn reads the
 * row (rows first) when the signal that it was answered wakes it.
 */
@Entity({ name: 'chat_client_tool_calls' })
export class ClientToolCallEntity {
  @PrimaryColumn('uuid', { name: 'turn_id', primaryKeyConstraintName: 'chat_client_tool_calls_pkey' })
  turnId!: string;

  @ManyToOne(() => ChatTurnEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'turn_id', foreignKeyConstraintName: 'chat_client_tool_calls_turn_id_fkey' })
  turn?: ChatTurnEntity;

  @PrimaryColumn('text', { name: 'call_id', primaryKeyConstraintName: 'chat_client_tool_calls_pkey' })
  callId!: string;

  @Column('text')
  name!: string;

  @Column('text')
  arguments!: string;

  @Column('text', { name: 'model_output', nullable: true })
  modelOutput!: string | null;

  /** Files the posted output hands the model (STC-09). */
  @Column('uuid', { name: 'file_ids', array: true, default: () => "'{}'" })
  fileIds!: string[];

  @Column('boolean', { name: 'is_error', default: false })
  isError!: boolean;

  @Column('timestamptz', { name: 'answered_at', nullable: true })
  answeredAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

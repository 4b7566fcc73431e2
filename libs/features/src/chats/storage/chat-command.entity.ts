import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ChatEntity } from './chat.entity';

/**
 * An `Idempotency-Key` of a message command, scoped to the caller and the Chat (EXE-02), with the
 * answer it got: a retry with the same input answers the same ids, another input is a conflict.
 */
@Entity({ name: 'chat_commands' })
export class ChatCommandEntity {
  @PrimaryColumn('text', { name: 'scope_kind', primaryKeyConstraintName: 'chat_commands_pkey' })
  scopeKind!: string;

  @PrimaryColumn('uuid', { name: 'scope_id', primaryKeyConstraintName: 'chat_commands_pkey' })
  scopeId!: string;

  @PrimaryColumn('uuid', { name: 'chat_id', primaryKeyConstraintName: 'chat_commands_pkey' })
  chatId!: string;

  @ManyToOne(() => ChatEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'chat_id', foreignKeyConstraintName: 'chat_commands_chat_id_fkey' })
  chat?: ChatEntity;

  @PrimaryColumn('text', { name: 'command_key', primaryKeyConstraintName: 'chat_commands_pkey' })
  commandKey!: string;

  @Column('bytea', { name: 'input_hash' })
  inputHash!: Buffer;

  @Column('jsonb')
  answer!: unknown;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

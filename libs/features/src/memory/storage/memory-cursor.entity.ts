import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { BotEntity } from '../../bots/storage/bot.entity';

/** How far learning got in one Chat of a Bot: the last message position learned from (FW-03: it only moves forward). */
@Entity({ name: 'memory_cursors' })
export class MemoryCursorEntity {
  @PrimaryColumn('uuid', { name: 'bot_id', primaryKeyConstraintName: 'memory_cursors_pkey' })
  botId!: string;

  @ManyToOne(() => BotEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'bot_id', foreignKeyConstraintName: 'memory_cursors_bot_id_fkey' })
  bot?: BotEntity;

  @PrimaryColumn('uuid', { name: 'chat_id', primaryKeyConstraintName: 'memory_cursors_pkey' })
  chatId!: string;

  @Column('bigint')
  position!: string;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}

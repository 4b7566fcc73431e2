import { Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { MemoryItemEntity } from './memory-item.entity';

/**
 * The keyed word index of Bot memory (decision 030): one row per distinct normalized word of an
 * item's content, as HMAC-SHA256 under a per-Bot key (truncated, base64url). No plaintext word is
 * ever stored; a query's words are hashed the same way and looked up by (Bot, word).
 */
@Entity({ name: 'memory_words' })
@Index('memory_words_item_id_idx', ['itemId'])
export class MemoryWordEntity {
  @PrimaryColumn('uuid', { name: 'bot_id', primaryKeyConstraintName: 'memory_words_pkey' })
  botId!: string;

  @PrimaryColumn('text', { primaryKeyConstraintName: 'memory_words_pkey' })
  word!: string;

  @PrimaryColumn('uuid', { name: 'item_id', primaryKeyConstraintName: 'memory_words_pkey' })
  itemId!: string;

  @ManyToOne(() => MemoryItemEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'item_id', foreignKeyConstraintName: 'memory_words_item_id_fkey' })
  item?: MemoryItemEntity;
}

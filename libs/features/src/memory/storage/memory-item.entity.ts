import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { BotEntity } from '../../bots/storage/bot.entity';
import { OrganizationEntity } from '../../../../platform/src/organizations/storage/organization.entity';

/**
 * One memory item of a Bot (decision 030). Tags, access rule, source links and status are plain
 * columns, read before any content (MEM-01); the content is sealed (AES-GCM, bound to the item's
 * ID), and `words` are keyed HMACs of its normalized words: search never sees plaintext.
 */
@Entity({ name: 'memory_items' })
@Index('memory_items_bot_id_id_idx', ['botId', 'id'])
// A GIN index: TypeORM cannot describe it, the migration owns it.
@Index('memory_items_tags_idx', { synchronize: false })
export class MemoryItemEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'memory_items_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'memory_items_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Column('uuid', { name: 'bot_id' })
  botId!: string;

  @ManyToOne(() => BotEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'bot_id', foreignKeyConstraintName: 'memory_items_bot_id_fkey' })
  bot?: BotEntity;

  @Column('text', { array: true, default: () => "'{}'" })
  tags!: string[];

  /** `{ kind: "bot" }`, `{ kind: "members", ids }` or `{ kind: "roles", roles }`. */
  @Column('jsonb', { default: { kind: 'bot' } })
  access!: Record<string, unknown>;

  /** `[{ type: "chat" | "turn" | "file" | "url", id }]`. */
  @Column('jsonb', { default: () => "'[]'" })
  sources!: unknown[];

  /** active | archived */
  @Column('text', { default: 'active' })
  status!: string;

  /** The master key the word index key (memory_words) was derived from. */
  @Column('text', { name: 'words_key_id' })
  wordsKeyId!: string;

  /** The content's token estimate: selection fits items into a budget without opening them. */
  @Column('integer')
  tokens!: number;

  @Column('text', { name: 'content_key_id' })
  contentKeyId!: string;

  @Column('bytea')
  content!: Buffer;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}

import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../../../platform/src/organizations/storage/organization.entity';

/**
 * A Bot of an organization: its model (`<provider name>/<model id>`), instructions and tool
 * definitions. The model names a provider by name, checked when the Bot is written.
 */
@Entity({ name: 'bots' })
@Index('bots_organization_id_id_idx', ['organizationId', 'id'])
export class BotEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'bots_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'bots_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Column('text')
  name!: string;

  /** `<provider name>/<model id>`. */
  @Column('text')
  model!: string;

  @Column('text')
  instructions!: string;

  /** The tool definitions, `[{ name, description, parameters }]`. */
  @Column('jsonb')
  tools!: unknown[];

  /** The Bot's Turn limits (`maxSteps`, `maxSeconds`, `maxOutputTokens`); absent keys take the defaults. */
  @Column('jsonb', { default: {} })
  limits!: Record<string, number>;

  /** `{ enabled, learn, learnAccess? }`: whether Turns select context from the Bot's memory, learn into it after they end, and for whom (absent: `member`). */
  @Column('jsonb', { default: { enabled: false, learn: false } })
  memory!: { enabled: boolean; learn: boolean; learnAccess?: 'member' | 'bot' };

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}

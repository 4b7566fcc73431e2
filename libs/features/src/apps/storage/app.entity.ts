import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../../../platform/src/organizations/storage/organization.entity';

/** An App: an MCP server registered from its Server Card (read once) or a bare Streamable HTTP URL. */
@Entity({ name: 'apps' })
@Index('apps_organization_id_id_idx', ['organizationId', 'id'])
export class AppEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'apps_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'apps_organization_id_fkey' })
  organization?: OrganizationEntity;

  /** The URL it was registered from: the card's, or the endpoint's. */
  @Column('text')
  url!: string;

  @Column('text')
  name!: string;

  @Column('text', { nullable: true })
  title!: string | null;

  @Column('text', { nullable: true })
  description!: string | null;

  @Column('text', { nullable: true })
  version!: string | null;

  /** Whether the URL served a Server Card (false: a bare endpoint, one remote). */
  @Column('boolean')
  card!: boolean;

  /** The card's remotes (`[{ type, url, headers, variables }]`). */
  @Column('jsonb')
  remotes!: unknown;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

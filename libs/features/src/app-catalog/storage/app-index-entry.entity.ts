import { Column, Entity, Index, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import { AppEntity } from '../../apps/storage/app.entity';

/** What the last crawl of an App read (MIG-04: shown only while the App has a verified proof). */
@Entity({ name: 'app_index_entries' })
@Index('app_index_entries_organization_id_idx', ['organizationId'])
export class AppIndexEntryEntity {
  @PrimaryColumn('uuid', { name: 'app_id', primaryKeyConstraintName: 'app_index_entries_pkey' })
  appId!: string;

  @OneToOne(() => AppEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'app_id', foreignKeyConstraintName: 'app_index_entries_app_id_fkey' })
  app?: AppEntity;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('text')
  name!: string;

  @Column('text', { nullable: true })
  title!: string | null;

  @Column('text', { nullable: true })
  description!: string | null;

  /** Tool names, as listed. */
  @Column('jsonb')
  tools!: unknown;

  @Column('boolean', { name: 'needs_authorization' })
  needsAuthorization!: boolean;

  @Column('timestamptz', { name: 'indexed_at' })
  indexedAt!: Date;
}

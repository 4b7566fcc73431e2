import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../organizations/storage/organization.entity';

/** A Vault of an organization: a named group of items whose values are sealed (decision 029). */
@Entity({ name: 'vaults' })
@Index('vaults_organization_id_name_key', ['organizationId', 'name'], { unique: true })
@Index('vaults_organization_id_id_idx', ['organizationId', 'id'])
export class VaultEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'vaults_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'vaults_organization_id_fkey' })
  organization?: OrganizationEntity;

  @Column('text')
  name!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { SealedRecordEntity } from '../../sealing/storage/sealed-record.entity';
import { VaultEntity } from './vault.entity';

/**
 * An item of a Vault. Its field values are never a column here: they live together in one sealed
 * record (purpose `vault-item.fields`), replaced as a whole, so a reader sees the old fields or
 * the new ones, never a mixture (SEC-02). References name the item's ID, never its name.
 */
@Entity({ name: 'vault_items' })
@Index('vault_items_vault_id_name_key', ['vaultId', 'name'], { unique: true })
@Index('vault_items_organization_id_id_idx', ['organizationId', 'id'])
export class VaultItemEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'vault_items_pkey' })
  id!: string;

  /** The Vault's organization, repeated so every lookup by item ID names it (IDN-08). */
  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'vault_id' })
  vaultId!: string;

  @ManyToOne(() => VaultEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'vault_id', foreignKeyConstraintName: 'vault_items_vault_id_fkey' })
  vault?: VaultEntity;

  @Column('text')
  name!: string;

  /** The names of the sealed fields, sorted: what the API may show. */
  @Column('jsonb', { name: 'field_names' })
  fieldNames!: string[];

  /** Host names or `*.example.com` patterns (a port may follow) the values may be sent to. */
  @Column('jsonb', { name: 'allowed_hosts' })
  allowedHosts!: string[];

  @Column('uuid', { name: 'fields_record_id' })
  fieldsRecordId!: string;

  @ManyToOne(() => SealedRecordEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'fields_record_id', foreignKeyConstraintName: 'vault_items_fields_record_id_fkey' })
  fieldsRecord?: SealedRecordEntity;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

import { Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { MemberEntity } from '../../organizations/storage/member.entity';
import { VaultEntity } from './vault.entity';

/** A member a Vault grants `vaults.use` to (owners and admins hold it on every Vault without a row). */
@Entity({ name: 'vault_users' })
export class VaultUserEntity {
  @PrimaryColumn('uuid', { name: 'vault_id', primaryKeyConstraintName: 'vault_users_pkey' })
  vaultId!: string;

  @PrimaryColumn('uuid', { name: 'member_id', primaryKeyConstraintName: 'vault_users_pkey' })
  memberId!: string;

  @ManyToOne(() => VaultEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'vault_id', foreignKeyConstraintName: 'vault_users_vault_id_fkey' })
  vault?: VaultEntity;

  @ManyToOne(() => MemberEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'member_id', foreignKeyConstraintName: 'vault_users_member_id_fkey' })
  member?: MemberEntity;
}

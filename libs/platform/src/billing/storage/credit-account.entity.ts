import { CreateDateColumn, Entity, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../organizations/storage/organization.entity';

/**
 * An organization's credits exist once it has this row, written with its first ledger entry:
 * from then on credits limit its spending and the platform sets its prices. Reservations lock
 * it after the budgets (the one lock order, docs/decisions/024); the balance itself is the
 * ledger's sum, never stored here.
 */
@Entity({ name: 'credit_accounts' })
export class CreditAccountEntity {
  @PrimaryColumn('uuid', { name: 'organization_id', primaryKeyConstraintName: 'credit_accounts_pkey' })
  organizationId!: string;

  @OneToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'credit_accounts_organization_id_fkey' })
  organization?: OrganizationEntity;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

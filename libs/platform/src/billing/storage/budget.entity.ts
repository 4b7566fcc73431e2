import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../organizations/storage/organization.entity';

/**
 * A spending limit of an organization, a Bot or a member, per UTC day, month or in total
 * (PLAT-08): exactly one of `limit_micros` (money) and `limit_tokens` (a quota). What it has
 * spent is derived from usage records and open reservations, never stored.
 */
@Entity({ name: 'budgets' })
@Index('budgets_organization_id_id_idx', ['organizationId', 'id'])
export class BudgetEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'budgets_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'budgets_organization_id_fkey' })
  organization?: OrganizationEntity;

  /** organization | bot | member */
  @Column('text', { name: 'scope_kind' })
  scopeKind!: string;

  @Column('uuid', { name: 'scope_id', nullable: true })
  scopeId!: string | null;

  /** day | month | total */
  @Column('text')
  period!: string;

  @Column('bigint', { name: 'limit_micros', nullable: true })
  limitMicros!: string | null;

  @Column('bigint', { name: 'limit_tokens', nullable: true })
  limitTokens!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

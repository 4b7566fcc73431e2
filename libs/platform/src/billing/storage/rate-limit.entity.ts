import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../organizations/storage/organization.entity';

/**
 * A rate limit of an organization, a Bot or a member (LIM-01): requests (model calls) and/or
 * tokens per minute, with its token buckets in the same row, so every node takes from the same
 * bucket under its row lock. A bucket holds at most one minute's worth and refills continuously;
 * `refilled_at` is when its level was last computed. A takeover cannot reset it: the bucket is
 * the database's, not a node's.
 */
@Entity({ name: 'rate_limits' })
@Index('rate_limits_organization_id_id_idx', ['organizationId', 'id'])
export class RateLimitEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'rate_limits_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'rate_limits_organization_id_fkey' })
  organization?: OrganizationEntity;

  /** organization | bot | member */
  @Column('text', { name: 'scope_kind' })
  scopeKind!: string;

  @Column('uuid', { name: 'scope_id', nullable: true })
  scopeId!: string | null;

  @Column('integer', { name: 'requests_per_minute', nullable: true })
  requestsPerMinute!: number | null;

  @Column('integer', { name: 'tokens_per_minute', nullable: true })
  tokensPerMinute!: number | null;

  /** The request bucket's level at `refilled_at` (fractions refill continuously). */
  @Column('double precision', { name: 'requests_available', nullable: true })
  requestsAvailable!: number | null;

  /** The token bucket's level; below 0 when confirmed usage passed the estimates taken. */
  @Column('double precision', { name: 'tokens_available', nullable: true })
  tokensAvailable!: number | null;

  @Column('timestamptz', { name: 'refilled_at', default: () => 'now()' })
  refilledAt!: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

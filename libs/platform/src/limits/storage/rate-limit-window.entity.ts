import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One fixed-window counter shared by every node (docs/decisions/017, 073): `bucket` names what is
 * counted and for whom (`sso-login:<client address>`, `auth-failure:<client address>`,
 * `auth-failure-key:<API key ID>`). The window starts at the bucket's first hit; a hit after it
 * ends starts a new one. One upsert counts.
 */
@Entity({ name: 'rate_limit_windows' })
export class RateLimitWindowEntity {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'rate_limit_windows_pkey' })
  bucket!: string;

  /** Ended windows are pruned by this column. */
  @Index('rate_limit_windows_started_at_idx')
  @Column('timestamptz', { name: 'started_at' })
  startedAt!: Date;

  @Column('integer')
  hits!: number;
}

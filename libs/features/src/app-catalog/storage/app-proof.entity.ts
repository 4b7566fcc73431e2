import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { AppEntity } from '../../apps/storage/app.entity';

/** A developer's proof of an App's domain (DEVT-01): `pending`, then `verified` or `failed`. */
@Entity({ name: 'app_proofs' })
@Index('app_proofs_app_id_idx', ['appId'])
export class AppProofEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'app_proofs_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'app_id' })
  appId!: string;

  @ManyToOne(() => AppEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'app_id', foreignKeyConstraintName: 'app_proofs_app_id_fkey' })
  app?: AppEntity;

  @Column('text')
  domain!: string;

  /** The challenge the domain must serve at `/.well-known/openbot-app-proof`. */
  @Column('text')
  token!: string;

  @Column('text')
  state!: string;

  /** Why the last verification failed (a fixed phrase, never the domain's answer); null unless `failed`. */
  @Column('text', { name: 'failure_reason', nullable: true })
  failureReason!: string | null;

  @Column('timestamptz', { name: 'verified_at', nullable: true })
  verifiedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

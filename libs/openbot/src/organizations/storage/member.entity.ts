import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from './organization.entity';

@Entity({ name: 'members' })
export class MemberEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'members_pkey' })
  id!: string;

  @Index('members_organization_id_idx')
  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'members_organization_id_fkey' })
  organization?: OrganizationEntity;

  /** owner | admin | member */
  @Column('text')
  role!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

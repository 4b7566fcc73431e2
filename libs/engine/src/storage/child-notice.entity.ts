import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A child's end, written in the child's end transaction (EXE-14); one per child (deduplicated). */
@Entity({ name: 'execution_child_notices' })
export class ChildNoticeEntity {
  @PrimaryColumn('uuid', { name: 'parent_id', primaryKeyConstraintName: 'execution_child_notices_pkey' })
  parentId!: string;

  @PrimaryColumn('uuid', { name: 'child_id', primaryKeyConstraintName: 'execution_child_notices_pkey' })
  childId!: string;

  @Column('text')
  state!: string;

  @Column('timestamptz', { name: 'consumed_at', nullable: true })
  consumedAt!: Date | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

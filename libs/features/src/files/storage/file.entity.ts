import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../../../platform/src/organizations/storage/organization.entity';

/**
 * A file's metadata (decision 028); its bytes are the object `object_key` in the object store.
 * `state`: `uploading` from before the first byte is written until the upload commits, then
 * `ready`. An `uploading` row is watched by its upload guard execution (`guard_execution_id`),
 * which removes the bytes and the row if the upload never commits (a crash, a cut-off upload).
 * Only `ready` files are visible through the API.
 */
@Entity({ name: 'files' })
@Index('files_organization_id_id_idx', ['organizationId', 'id'])
export class FileEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'files_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'files_organization_id_fkey' })
  organization?: OrganizationEntity;

  /** The member who uploaded it. */
  @Column('uuid', { name: 'created_by' })
  createdBy!: string;

  /** The filename of the upload's part, as given. */
  @Column('text')
  name!: string;

  @Column('text', { name: 'content_type' })
  contentType!: string;

  @Column('bigint', { nullable: true })
  bytes!: string | null;

  /** Hex sha256 of the bytes; null while uploading. */
  @Column('text', { nullable: true })
  sha256!: string | null;

  @Column('text', { name: 'object_key' })
  objectKey!: string;

  @Column('text', { default: 'uploading' })
  state!: string;

  /** An upload that has not committed by then is abandoned (OPENBOT_FILE_UPLOAD_TIMEOUT_SECONDS). */
  @Column('timestamptz', { name: 'upload_deadline' })
  uploadDeadline!: Date;

  @Column('uuid', { name: 'guard_execution_id' })
  guardExecutionId!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A value only the server can read: inputs, outside results, failure causes (SEC-01). */
@Entity({ name: 'sealed_records' })
export class SealedRecordEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'sealed_records_pkey' })
  id!: string;

  /** What the value is for (`error.cause`, …); part of the associated data, so it cannot be swapped. */
  @Column('text')
  purpose!: string;

  @Column('text', { name: 'key_id' })
  keyId!: string;

  @Column('bytea')
  data!: Buffer;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

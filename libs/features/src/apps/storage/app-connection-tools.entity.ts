import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { AppConnectionEntity } from './app-connection.entity';

/** Full discovery of one connection at one revision (STC-12): the checked tools, the refused ones and where a long list was cut. */
@Entity({ name: 'app_connection_tools' })
export class AppConnectionToolsEntity {
  @PrimaryColumn('uuid', { name: 'connection_id', primaryKeyConstraintName: 'app_connection_tools_pkey' })
  connectionId!: string;

  @PrimaryColumn('integer', { primaryKeyConstraintName: 'app_connection_tools_pkey' })
  revision!: number;

  @ManyToOne(() => AppConnectionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'connection_id', foreignKeyConstraintName: 'app_connection_tools_connection_id_fkey' })
  connection?: AppConnectionEntity;

  @Column('jsonb')
  tools!: unknown;

  @Column('jsonb')
  refused!: unknown;

  @Column('integer', { name: 'cut_at', nullable: true })
  cutAt!: number | null;

  @Column('timestamptz', { name: 'listed_at', default: () => 'now()' })
  listedAt!: Date;
}

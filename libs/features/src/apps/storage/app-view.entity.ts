import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { AppConnectionEntity } from './app-connection.entity';

/**
 * A View (MCP Apps `ui://` resource) opened by a member for one tool of a connection: a stored
 * binding, so it stays valid across instance restarts and on every node (FW-05). It keeps the
 * declarations of the connection's tools at the revision it was opened at: the View's tool calls
 * send those, checked like a model's calls (STC-12).
 */
@Entity({ name: 'app_views' })
@Index('app_views_organization_id_id_idx', ['organizationId', 'id'])
@Index('app_views_connection_id_idx', ['connectionId'])
export class AppViewEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'app_views_pkey' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'member_id' })
  memberId!: string;

  @Column('uuid', { name: 'connection_id' })
  connectionId!: string;

  @ManyToOne(() => AppConnectionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'connection_id', foreignKeyConstraintName: 'app_views_connection_id_fkey' })
  connection?: AppConnectionEntity;

  @Column('text', { name: 'tool_name' })
  toolName!: string;

  @Column('text')
  uri!: string;

  @Column('integer')
  revision!: number;

  @Column('jsonb')
  declarations!: unknown;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { AppConnectionEntity } from './app-connection.entity';

/**
 * A physical scope of a connection (RES-07): an MCP connection open on one node, with its own
 * lease. `close_result` is what its close did (`deleted`, `already_closed`, `refused`, `local`); a
 * scope without one is not proven released (RES-06). A failed close leaves it open and keeps its
 * error ID in `close_error_id`.
 */
@Entity({ name: 'app_connection_scopes' })
@Index('app_connection_scopes_connection_id_idx', ['connectionId'])
export class AppConnectionScopeEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'app_connection_scopes_pkey' })
  id!: string;

  @Column('uuid', { name: 'connection_id' })
  connectionId!: string;

  @ManyToOne(() => AppConnectionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'connection_id', foreignKeyConstraintName: 'app_connection_scopes_connection_id_fkey' })
  connection?: AppConnectionEntity;

  @Column('text', { name: 'node_id' })
  nodeId!: string;

  @Column('uuid', { name: 'execution_id', nullable: true })
  executionId!: string | null;

  /** The endpoint the scope reached (a replaced route keeps its old URL until it is closed). */
  @Column('text')
  url!: string;

  @Column('text')
  era!: string;

  @Column('text', { name: 'session_id', nullable: true })
  sessionId!: string | null;

  @Column('timestamptz', { name: 'lease_until' })
  leaseUntil!: Date;

  @Column('timestamptz', { name: 'opened_at', default: () => 'now()' })
  openedAt!: Date;

  @Column('timestamptz', { name: 'closed_at', nullable: true })
  closedAt!: Date | null;

  @Column('jsonb', { name: 'close_result', nullable: true })
  closeResult!: unknown;

  /** The sealed error record of the owner's last failed close: the scope stays open for the cleanup (RES-06). */
  @Column('uuid', { name: 'close_error_id', nullable: true })
  closeErrorId!: string | null;
}

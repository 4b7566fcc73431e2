import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One open event stream of a credential, held in one of its numbered slots (1 … the cap), so
 * the per-key cap holds across nodes with one insert (docs/decisions/017). A slot frees when its
 * stream closes, or by itself at `expires_at` (the stream's maximum lifetime) if its node died.
 */
@Entity({ name: 'event_stream_slots' })
export class EventStreamSlotEntity {
  /** `key:<API key ID>`, `session:<session ID>`. */
  @PrimaryColumn('text', { primaryKeyConstraintName: 'event_stream_slots_pkey' })
  credential!: string;

  @PrimaryColumn('integer', { primaryKeyConstraintName: 'event_stream_slots_pkey' })
  slot!: number;

  /** The stream holding the slot: only it may release it. */
  @Column('uuid')
  holder!: string;

  @Column('text', { name: 'node_id' })
  nodeId!: string;

  @Index('event_stream_slots_expires_at_idx')
  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;
}

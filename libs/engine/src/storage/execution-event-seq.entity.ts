import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * The sequence counter of an execution's event log (EVT-01): the number of the last event
 * appended. Every event writer takes it after its lock on the execution row, so numbers have no
 * gaps and no repeats; a row exists once the first event is appended.
 */
@Entity({ name: 'execution_event_seqs' })
export class ExecutionEventSeqEntity {
  @PrimaryColumn('uuid', { name: 'execution_id', primaryKeyConstraintName: 'execution_event_seqs_pkey' })
  executionId!: string;

  @Column('integer', { name: 'last_seq' })
  lastSeq!: number;
}

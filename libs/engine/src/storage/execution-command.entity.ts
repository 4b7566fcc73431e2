import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A command key: one request and its input, scoped to a member or service and a target (EXE-02, IDN-11). */
@Entity({ name: 'execution_commands' })
export class ExecutionCommandEntity {
  @PrimaryColumn('text', { name: 'scope_kind', primaryKeyConstraintName: 'execution_commands_pkey' })
  scopeKind!: string;

  @PrimaryColumn('uuid', { name: 'scope_id', primaryKeyConstraintName: 'execution_commands_pkey' })
  scopeId!: string;

  /** The resource the command is about, e.g. `chat:<id>`, or the workflow name. */
  @PrimaryColumn('text', { primaryKeyConstraintName: 'execution_commands_pkey' })
  target!: string;

  @PrimaryColumn('text', { name: 'command_key', primaryKeyConstraintName: 'execution_commands_pkey' })
  commandKey!: string;

  /** SHA-256 of the canonical JSON of the input: a changed input is a conflict. */
  @Column('bytea', { name: 'input_hash' })
  inputHash!: Buffer;

  @Column('uuid', { name: 'execution_id' })
  executionId!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

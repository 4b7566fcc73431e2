import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A recurring schedule (docs/decisions/022-schedules-on-croner.md): a cron expression in an IANA
 * time zone that submits a named workflow with a sealed input and a scope at each fire time.
 */
@Entity({ name: 'schedules' })
@Index('schedules_name_idx', ['name'], { unique: true })
@Index('schedules_next_fire_at_idx', ['nextFireAt'])
export class ScheduleEntity {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'schedules_pkey' })
  id!: string;

  /** The caller's stable name: upserting the same name updates the schedule. */
  @Column('text')
  name!: string;

  @Column('text')
  cron!: string;

  /** IANA time zone the expression is read in, e.g. `Europe/Berlin`. */
  @Column('text', { name: 'time_zone' })
  timeZone!: string;

  @Column('text')
  workflow!: string;

  @Column('uuid', { name: 'organization_id', nullable: true })
  organizationId!: string | null;

  @Column('text', { name: 'scope_kind' })
  scopeKind!: string;

  @Column('uuid', { name: 'scope_id' })
  scopeId!: string;

  @Column('text', { name: 'resource_type', nullable: true })
  resourceType!: string | null;

  @Column('text', { name: 'resource_id', nullable: true })
  resourceId!: string | null;

  @Column('text', { name: 'key_id' })
  keyId!: string;

  /** Sealed JSON input of every submitted execution. */
  @Column('bytea')
  input!: Buffer;

  @Column('text', { name: 'identity_key_id', nullable: true })
  identityKeyId!: string | null;

  /** Sealed identity the executions act as (IDN-01); null: none. */
  @Column('bytea', { nullable: true })
  identity!: Buffer | null;

  /** skip | latest | catch-up: what a fire time found late (after downtime) does. */
  @Column('text')
  missed!: string;

  /** For `catch-up`: how far back late fire times are still run. */
  @Column('integer', { name: 'catch_up_seconds', nullable: true })
  catchUpSeconds!: number | null;

  /** The next fire time not yet handled; null when the expression has no more runs. */
  @Column('timestamptz', { name: 'next_fire_at', nullable: true })
  nextFireAt!: Date | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}

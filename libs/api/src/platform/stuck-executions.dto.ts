import { ApiProperty } from '@nestjs/swagger';
import { UNSETTLED_STATES, type UnsettledExecution } from '@openbot/features';
import { ResourceRefBody } from '../executions/execution.dto';

export class ScopeBody {
  @ApiProperty({ enum: ['member', 'service'] })
  kind!: string;

  @ApiProperty({ format: 'uuid' })
  id!: string;
}

export class StuckExecutionBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ description: 'The workflow, e.g. `chat.turn`' })
  kind!: string;

  @ApiProperty({ enum: UNSETTLED_STATES })
  state!: string;

  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'null: platform work of no organization' })
  organizationId!: string | null;

  @ApiProperty({ type: ScopeBody, description: 'Who it works for: a member or a service' })
  scope!: ScopeBody;

  @ApiProperty()
  generation!: number;

  @ApiProperty({ nullable: true, type: String, description: 'The node that owns it (its last owner when the lease ran out)' })
  ownerNode!: string | null;

  @ApiProperty({ nullable: true, type: String, format: 'date-time', description: 'When the owner’s lease runs or ran out; null: no lease (nobody runs it now)' })
  leaseUntil!: string | null;

  @ApiProperty({ description: 'The lease is live now' })
  leased!: boolean;

  @ApiProperty({ format: 'date-time', description: 'Its last change: in this state at least since then' })
  since!: string;

  @ApiProperty({ description: 'Seconds since `since`' })
  ageSeconds!: number;

  @ApiProperty({ description: 'Paused (TASK-02): waits until resumed' })
  paused!: boolean;

  @ApiProperty({ type: ResourceRefBody, nullable: true, description: 'The resource it belongs to (`turn`, `chat`, …)' })
  resource!: ResourceRefBody | null;
}

export class StuckExecutionPage {
  @ApiProperty({ type: [StuckExecutionBody] })
  data!: StuckExecutionBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export function toStuckExecutionBody(e: UnsettledExecution, now: number): StuckExecutionBody {
  return {
    id: e.id,
    kind: e.kind,
    state: e.state,
    organizationId: e.organizationId,
    scope: { kind: e.scope.kind, id: e.scope.id },
    generation: e.generation,
    ownerNode: e.ownerNode,
    leaseUntil: e.leaseUntil === null ? null : e.leaseUntil.toISOString(),
    leased: e.leased,
    since: e.since.toISOString(),
    ageSeconds: Math.max(0, Math.floor((now - e.since.getTime()) / 1000)),
    paused: e.paused,
    resource: e.resource === null ? null : { type: e.resource.type, id: e.resource.id },
  };
}

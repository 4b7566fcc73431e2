import { Controller, Get, Inject, Query } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { parseListOrder, parsePageRequest, rejectUnknownQueryParameters, type MemberCaller } from '@openbot/domain';
import { ListAuditEvents, type AuditEventView } from '@openbot/platform';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ApiOrderQuery, ApiPageQuery } from '../openapi/page-query';

class AuditActorBody {
  @ApiProperty({ enum: ['member', 'service', 'platform-admin', 'sso'] })
  kind!: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  id!: string | null;
}

class AuditTargetBody {
  @ApiProperty({ example: 'api-key' })
  type!: string;

  @ApiProperty()
  id!: string;
}

export class AuditEventBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ type: AuditActorBody })
  actor!: AuditActorBody;

  @ApiProperty({ example: 'member.role-changed' })
  action!: string;

  @ApiProperty({ type: AuditTargetBody })
  target!: AuditTargetBody;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Non-secret facts of the change' })
  details!: Record<string, unknown>;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class AuditEventPage {
  @ApiProperty({ type: [AuditEventBody] })
  data!: AuditEventBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

function toAuditEventBody(event: AuditEventView): AuditEventBody {
  return {
    id: event.id,
    actor: { kind: event.actor.kind, id: event.actor.id },
    action: event.action,
    target: { type: event.target.type, id: event.target.id },
    details: event.details,
    createdAt: new Date(event.createdAt).toISOString(),
  };
}

@ApiTags('audit')
@ApiBearerAuth()
@Access('member')
@Controller('v1/audit-events')
export class AuditController {
  constructor(@Inject(QueryBus) private readonly queries: QueryBus) {}

  @Get()
  @Requires('audit.read')
  @ApiOperation({
    summary: 'The audit log of security-relevant changes (keys, roles, members, SSO), oldest first unless `order=desc`',
    description: 'Owners and admins. A query parameter other than `after`, `limit` and `order` is a 400 naming it (the log has no filters).',
  })
  @ApiPageQuery()
  @ApiOrderQuery('asc')
  @ApiOkResponse({ type: AuditEventPage })
  @ApiErrors(400, 401, 403)
  async list(@CurrentMember() caller: MemberCaller, @Query() query: Record<string, unknown>): Promise<AuditEventPage> {
    rejectUnknownQueryParameters(query, ['after', 'limit', 'order']);
    const page = await this.queries.execute(new ListAuditEvents(caller, parsePageRequest(query.after, query.limit), parseListOrder(query.order, 'asc')));
    return { data: page.data.map(toAuditEventBody), next: page.next };
  }
}

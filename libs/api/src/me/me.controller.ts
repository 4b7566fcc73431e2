import { Controller, Get, Inject } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { MEMBER_ROLES, PERMISSIONS, type MemberCaller } from '@openbot/domain';
import { GetWhoAmI } from '@openbot/platform';
import { CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';

class MeOrganization {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;
}

class MeMember {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: MEMBER_ROLES })
  role!: string;

  @ApiProperty({ enum: PERMISSIONS, isArray: true, description: "What this request may do: the role's permissions narrowed by the API key's scopes" })
  permissions!: string[];
}

class MeApiKey {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;
}

export class MeBody {
  @ApiProperty({ type: MeOrganization })
  organization!: MeOrganization;

  @ApiProperty({ type: MeMember })
  member!: MeMember;

  @ApiProperty({ type: MeApiKey, nullable: true, description: 'The key of this request; null for a session' })
  apiKey!: MeApiKey | null;
}

@ApiTags('me')
@ApiBearerAuth()
@Controller('v1/me')
export class MeController {
  constructor(@Inject(QueryBus) private readonly queries: QueryBus) {}

  @Get()
  @Requires('organization.read')
  @ApiOperation({ summary: 'The calling member, its organization and credential' })
  @ApiOkResponse({ type: MeBody })
  @ApiErrors(401, 403)
  async me(@CurrentMember() caller: MemberCaller): Promise<MeBody> {
    const me = await this.queries.execute(new GetWhoAmI(caller));
    if (me.kind !== 'member') throw new Error('GetWhoAmI answered for a member with a non-member');
    return {
      organization: { id: me.organization.id, name: me.organization.name },
      member: { id: me.member.id, role: me.member.role, permissions: [...me.member.permissions] },
      apiKey: me.apiKey === null ? null : { id: me.apiKey.id, name: me.apiKey.name },
    };
  }
}

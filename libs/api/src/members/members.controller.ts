import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type MemberCaller } from '@openbot/domain';
import { AddMember, ChangeMemberRole, ListMembers, RemoveMember } from '@openbot/platform';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors, ApiLimitReached } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../openapi/page-query';
import { AddedMemberBody, AddMemberRequest, ChangeMemberRoleRequest, MemberBody, MemberPage, toMemberBody } from './member.dto';

@ApiTags('members')
@ApiBearerAuth()
@Access('member')
@Controller('v1/members')
export class MembersController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post()
  @Requires('members.manage')
  @HttpCode(201)
  @ApiOperation({ summary: 'Add a member with a role and a first API key', description:
      'Owners and admins; only an owner may add an owner. The first key is unscoped (the whole role), so the calling credential must hold ' +
      'every permission of `role` itself: a key scoped to `members.manage` alone is 403. SSO members are added on their first login.',
  })
  @ApiCreatedResponse({ type: AddedMemberBody })
  @ApiErrors(400, 401, 403)
  @ApiLimitReached('apiKeys')
  async add(@CurrentMember() caller: MemberCaller, @Body() body: AddMemberRequest): Promise<AddedMemberBody> {
    const added = await this.commands.execute(new AddMember(caller, body.role, body.name?.trim() ?? null));
    return { member: toMemberBody(added.member), apiKey: { ...added.apiKey } };
  }

  @Get()
  @Requires('members.read')
  @ApiOperation({ summary: "List the organization's members, oldest first" })
  @ApiPageQuery()
  @ApiOkResponse({ type: MemberPage })
  @ApiErrors(400, 401, 403)
  async list(@CurrentMember() caller: MemberCaller, @Query('after') after?: string, @Query('limit') limit?: string): Promise<MemberPage> {
    const page = await this.queries.execute(new ListMembers(caller, parsePageRequest(after, limit)));
    return { data: page.data.map(toMemberBody), next: page.next };
  }

  @Patch(':id')
  @Requires('members.manage')
  @ApiOperation({ summary: "Change a member's role", description:
      'Takes effect on the next request and on running work at its next check. The calling credential must hold every permission of the new ' +
      '`role` (403 otherwise); only an owner changes an owner or makes one. The last owner cannot be demoted (409 LastOwner).',
  })
  @ApiOkResponse({ type: MemberBody })
  @ApiErrors(400, 401, 403, 404, 409)
  async changeRole(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Body() body: ChangeMemberRoleRequest): Promise<MemberBody> {
    return toMemberBody(await this.commands.execute(new ChangeMemberRole(caller, id, body.role)));
  }

  @Delete(':id')
  @Requires('members.manage')
  @ApiOperation({ summary: 'Remove a member', description: 'Revokes its keys and sessions at once; its running work stops at its next identity check. The last owner cannot be removed (409 LastOwner).' })
  @ApiOkResponse({ type: MemberBody, description: 'The member as it was when removed' })
  @ApiErrors(401, 403, 404, 409)
  async remove(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<MemberBody> {
    return toMemberBody(await this.commands.execute(new RemoveMember(caller, id)));
  }
}

import { Module } from '@nestjs/common';
import { AddMemberHandler } from './commands/add-member.command';
import { ChangeMemberRoleHandler } from './commands/change-member-role.command';
import { RemoveMemberHandler } from './commands/remove-member.command';
import { ListMembersHandler } from './queries/list-members.query';

/** Members of an organization and their roles (FW-09: its own module, sharing the access rules). */
@Module({ providers: [AddMemberHandler, ChangeMemberRoleHandler, RemoveMemberHandler, ListMembersHandler] })
export class MembersModule {}

import { Module } from '@nestjs/common';
import { CreateOrganizationHandler } from './commands/create-organization.command';
import { ListOrganizationsHandler } from './queries/list-organizations.query';
import { GetWhoAmIHandler } from './queries/who-am-i.query';

@Module({ providers: [CreateOrganizationHandler, ListOrganizationsHandler, GetWhoAmIHandler] })
export class OrganizationsModule {}

import { MemberEntity } from './member.entity';
import { OrganizationEntity } from './organization.entity';

/** The organizations module's entities (organizations and their members). */
export const ORGANIZATIONS_ENTITIES = [OrganizationEntity, MemberEntity] as const;

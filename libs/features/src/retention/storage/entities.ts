import { OrganizationRetentionEntity } from './organization-retention.entity';

/** The retention module's entity (an organization's retention settings). */
export const RETENTION_ENTITIES = [OrganizationRetentionEntity] as const;

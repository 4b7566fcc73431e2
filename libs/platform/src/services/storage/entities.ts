import { ServiceEntity } from './service.entity';

/** The services module's entity (a ServiceIdentity of an organization). */
export const SERVICES_ENTITIES = [ServiceEntity] as const;

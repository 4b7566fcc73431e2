import { AuditEventEntity } from './audit-event.entity';

/** The audit module's entity (one audit event). */
export const AUDIT_ENTITIES = [AuditEventEntity] as const;

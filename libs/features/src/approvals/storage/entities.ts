import { ApprovalEntity } from './approval.entity';

/** The approvals module's entity (a tool call waiting for a member's decision). */
export const APPROVALS_ENTITIES = [ApprovalEntity] as const;

import { ExecutionLimitsEntity } from './execution-limits.entity';
import { ExecutionPauseEntity } from './execution-pause.entity';
import { ExecutionPlanEntity } from './execution-plan.entity';

/** The executions module's entities (pauses, limits and plans of executions). */
export const EXECUTIONS_ENTITIES = [ExecutionPauseEntity, ExecutionLimitsEntity, ExecutionPlanEntity] as const;

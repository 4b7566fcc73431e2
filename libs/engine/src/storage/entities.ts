import { ChildNoticeEntity } from './child-notice.entity';
import { ExecutionAwaitEntity } from './execution-await.entity';
import { ExecutionCallEntity } from './execution-call.entity';
import { ExecutionCommandEntity } from './execution-command.entity';
import { ExecutionEventSeqEntity } from './execution-event-seq.entity';
import { ExecutionEventEntity } from './execution-event.entity';
import { ExecutionSignalEntity } from './execution-signal.entity';
import { ExecutionTimerEntity } from './execution-timer.entity';
import { ExecutionEntity } from './execution.entity';
import { ScheduleFireEntity } from './schedule-fire.entity';
import { ScheduleEntity } from './schedule.entity';

export const ENGINE_ENTITIES = [
  ExecutionEntity,
  ExecutionCommandEntity,
  ExecutionEventEntity,
  ExecutionEventSeqEntity,
  ExecutionCallEntity,
  ExecutionSignalEntity,
  ExecutionTimerEntity,
  ChildNoticeEntity,
  ScheduleEntity,
  ScheduleFireEntity,
  ExecutionAwaitEntity,
] as const;

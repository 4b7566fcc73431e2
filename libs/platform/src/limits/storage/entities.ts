import { EventStreamSlotEntity } from './event-stream-slot.entity';
import { RateLimitWindowEntity } from './rate-limit-window.entity';

/** The limits module's entities: shared rate-limit windows and open-stream slots. */
export const LIMITS_ENTITIES = [RateLimitWindowEntity, EventStreamSlotEntity] as const;

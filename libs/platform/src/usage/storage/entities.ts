import { UsageHoldEntity } from './usage-hold.entity';
import { UsageRecordEntity } from './usage-record.entity';

/** The usage module's entities (usage records and holds). */
export const USAGE_ENTITIES = [UsageRecordEntity, UsageHoldEntity] as const;

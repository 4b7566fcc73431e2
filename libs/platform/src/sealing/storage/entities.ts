import { SealedRecordEntity } from './sealed-record.entity';

/** The sealing module's entity (one sealed record). */
export const SEALING_ENTITIES = [SealedRecordEntity] as const;

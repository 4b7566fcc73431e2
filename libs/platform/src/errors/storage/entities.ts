import { ErrorRecordEntity } from './error-record.entity';

/** The errors module's entity (a sealed error record). */
export const ERRORS_ENTITIES = [ErrorRecordEntity] as const;
